/**
 * Content negotiation for the encodings the serving layer can offer (brotli, gzip): the client's
 * `Accept-Encoding` with q-values (RFC 9110 §12.5.3). `q=0` refuses an encoding, `*` stands for any
 * encoding not named; among equal q-values brotli wins (smaller). Identity is always acceptable
 * here (a server may send it even when refused). Pure.
 */
export type Encoding = 'br' | 'gzip';

export const ENCODINGS: readonly Encoding[] = ['br', 'gzip'];

export function chooseEncoding(acceptEncoding: string, offered: readonly Encoding[]): Encoding | undefined {
  if (offered.length === 0 || acceptEncoding === '') return undefined;
  let star: number | undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.split(';');
    const name = rawName!.trim().toLowerCase();
    if (name === '') continue;
    let weight = 1;
    for (const param of params) {
      const [k, v] = param.split('=');
      if (k?.trim().toLowerCase() === 'q') {
        const n = Number(v?.trim());
        weight = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0;
      }
    }
    if (name === '*') star = weight;
    else q.set(name === 'x-gzip' ? 'gzip' : name, weight);
  }
  let best: Encoding | undefined;
  let bestQ = 0;
  for (const encoding of offered) {
    const weight = q.get(encoding) ?? star ?? 0;
    if (weight > bestQ) {
      best = encoding;
      bestQ = weight;
    }
  }
  return best;
}

/** Worth compressing: text and the structured-text types (scripts, styles, JSON, SVG, XML, wasm). */
export function isCompressible(contentType: string): boolean {
  return /^text\/|javascript|json|xml|svg|wasm|manifest/i.test(contentType);
}
