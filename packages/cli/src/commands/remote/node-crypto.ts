import type * as NodeCrypto from 'node:crypto';
import { createRequire } from 'node:module';

// `node:crypto` is taken at its first use, not when the command loads: a push that hashes nothing
// (a no-op, every digest kept in the local digest cache) never loads it, which spared about 2 to
// 3 ms of each such push (docs/sync.md "Speed"). The one hash every push makes, the name of the
// folder's cache file, is `sha256Text` below, in JavaScript.

/**
 * Node's `node:crypto`, loaded by the first call: `process.getBuiltinModule` (Node 20.16 and 22.3
 * on), else `require` (Node 22.0 to 22.2, which the package's engines also take).
 */
export const nodeCrypto = (): typeof NodeCrypto =>
  (process.getBuiltinModule as typeof process.getBuiltinModule | undefined)?.('node:crypto') ??
  (createRequire(import.meta.url)('node:crypto') as typeof NodeCrypto);

/** The SHA-256 round constants (FIPS 180-4, 4.2.2). */
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
/** The initial hash value (FIPS 180-4, 5.3.3). */
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

const ror = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/**
 * The SHA-256 of a text (its UTF-8 bytes), lowercase hex: what
 * `createHash('sha256').update(text).digest('hex')` gives, for a short text (a path) without
 * loading `node:crypto`. Not for files: those go through `nodeCrypto()`.
 */
export function sha256Text(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  // The message, a 1 bit, zeros, and its length in bits as a 64-bit number, to whole 64-byte blocks.
  const padded = new Uint8Array(Math.ceil((bytes.length + 9) / 64) * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = bytes.length * 8;
  view.setUint32(padded.length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(padded.length - 4, bits >>> 0);
  const h = new Uint32Array(H0);
  const w = new Uint32Array(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      w[i] = w[i - 16]! + (ror(a, 7) ^ ror(a, 18) ^ (a >>> 3)) + w[i - 7]! + (ror(b, 17) ^ ror(b, 19) ^ (b >>> 10));
    }
    let [a, b, c, d, e, f, g, hh] = [h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!];
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    // A Uint32Array keeps each sum modulo 2^32.
    [a, b, c, d, e, f, g, hh].forEach((v, i) => (h[i] = h[i]! + v));
  }
  let hex = '';
  for (const word of h) hex += word.toString(16).padStart(8, '0');
  return hex;
}
