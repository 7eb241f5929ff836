import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { digestCacheFile } from './local-digests.js';
import { nodeCrypto, sha256Text } from './node-crypto.js';

// The local digest cache file is named after the SHA-256 of the folder's real path, now computed
// without node:crypto (docs/sync.md "Speed"): the name must stay what node:crypto gave, or an
// upgrade would cost every folder a rehash.

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('nodeCrypto', () => {
  it('is node:crypto, also where Node has no process.getBuiltinModule (22.0 to 22.2)', () => {
    expect(nodeCrypto().createHash).toBe(createHash);
    const own = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
    Object.defineProperty(process, 'getBuiltinModule', { value: undefined, configurable: true, writable: true });
    try {
      expect(nodeCrypto().createHash).toBe(createHash);
    } finally {
      if (own) Object.defineProperty(process, 'getBuiltinModule', own);
      else delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
    }
  });
});

describe('sha256Text', () => {
  it('gives what node:crypto gives, at every length around the block edges and for any text (fuzz)', () => {
    for (let n = 0; n <= 200; n++)
      for (const c of ['a', 'é', '€', '😀']) expect(sha256Text(c.repeat(n))).toBe(sha(c.repeat(n)));
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(sha256Text(text)).toBe(sha(text));
      }),
      fuzzOptions(),
    );
  });
});

describe('the local digest cache file', () => {
  it('keeps the name earlier versions gave it: the first 32 hex digits of the SHA-256 of the real path', () => {
    const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-digests-'));
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-digests-root-'));
    dirs.push(cacheHome, parent);
    for (const name of ['plain', 'é-ü 文件夹 😀', 'x'.repeat(120)]) {
      const root = path.join(parent, name);
      fs.mkdirSync(root);
      const link = path.join(parent, `link-${name.slice(0, 20)}`);
      fs.symlinkSync(root, link);
      const expected = path.join(
        cacheHome,
        'ack',
        'sync-digests',
        `${sha(fs.realpathSync(root)).slice(0, 32)}.digests`,
      );
      expect(digestCacheFile(root, { XDG_CACHE_HOME: cacheHome })).toBe(expected);
      // By its real path: the folder reached through a link shares it.
      expect(digestCacheFile(link, { XDG_CACHE_HOME: cacheHome })).toBe(expected);
    }
  });
});
