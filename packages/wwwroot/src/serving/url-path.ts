/**
 * Turns the raw (still percent-encoded) URL path of a request into the file-name segments it
 * names, refusing anything that could leave the folder it is served from. Pure: no disk access.
 *
 * The path is decoded exactly once, segment by segment, so an encoded separator (`%2f`, `%5c`)
 * never becomes a separator and a double encoding (`%252e%252e`) stays a literal name (`%2e%2e`)
 * that is simply not found. Overlong UTF-8 (`%c0%ae`) is malformed and throws in
 * `decodeURIComponent`; the host edge already refuses it with 400, and so does this function.
 */
export type UrlPathResult =
  | { ok: true; segments: string[]; trailingSlash: boolean }
  | { ok: false; status: 400 | 404; reason: string };

export function decodeUrlPath(rawPath: string): UrlPathResult {
  if (rawPath.charCodeAt(0) !== 47 /* / */) return { ok: false, status: 400, reason: 'the path must start with /' };
  const parts = rawPath.split('/');
  const segments: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    // Empty segments (`//`, a trailing `/`) are skipped: a served folder is never left by them.
    if (part === '') continue;
    let segment = part;
    if (part.includes('%')) {
      try {
        segment = decodeURIComponent(part);
      } catch {
        return { ok: false, status: 400, reason: 'malformed percent-encoding' };
      }
    }
    const refusal = refuseSegment(segment, segments.length === 0);
    if (refusal) return refusal;
    segments.push(segment);
  }
  return { ok: true, segments, trailingSlash: rawPath.length > 1 && rawPath.endsWith('/') };
}

function refuseSegment(segment: string, first: boolean): UrlPathResult | undefined {
  if (segment === '..' || segment === '.') return { ok: false, status: 400, reason: 'dot segment' };
  if (segment.includes('/') || segment.includes('\\')) return { ok: false, status: 400, reason: 'encoded or back-slash separator' };
  if (segment.includes('\0')) return { ok: false, status: 400, reason: 'NUL in path' };
  if (first && /^[A-Za-z]:/.test(segment)) return { ok: false, status: 400, reason: 'drive letter' };
  // Dotfiles and dot-folders are not served, except `/.well-known/` (ACME, security.txt).
  if (segment.charCodeAt(0) === 46 /* . */ && !(first && segment.toLowerCase() === '.well-known')) {
    return { ok: false, status: 404, reason: 'dotfile' };
  }
  return undefined;
}

/** Encodes segments back into a URL path (for a redirect `Location`), always starting with one `/`. */
export function encodeUrlPath(segments: readonly string[], trailingSlash: boolean): string {
  const joined = segments.map((s) => encodeURIComponent(s)).join('/');
  return '/' + joined + (trailingSlash && joined !== '' ? '/' : '');
}
