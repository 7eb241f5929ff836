import { type RequestPath } from '@ack/host';
import { parseRequestPath } from '@ack/host/serving';

/** The file-name segments a URL path names, or why it is refused (and with which status). */
export type UrlPathResult =
  { ok: true; segments: readonly string[]; trailingSlash: boolean } | { ok: false; status: 400 | 404; reason: string };

/**
 * Checks that the decoded segments of a request path (see `req.ack.path`, decoded once at the host
 * edge) name a file inside the folder they are served from, refusing anything that could leave it.
 * Pure: no disk access.
 *
 * Each segment was decoded exactly once, so an encoded separator (`%2f`, `%5c`) that became part of
 * a segment is refused here, and a double encoding (`%252e%252e`) stays a literal name (`%2e%2e`)
 * that is simply not found. Overlong UTF-8 (`%c0%ae`) is malformed; the host edge already refuses it
 * with 400, and so does this check.
 */
export function checkUrlPath(path: RequestPath, rawPath: string): UrlPathResult {
  if (rawPath.charCodeAt(0) !== 47 /* / */) return { ok: false, status: 400, reason: 'the path must start with /' };
  if (!path.wellFormed) return { ok: false, status: 400, reason: 'malformed percent-encoding' };
  const { segments } = path;
  return refuseSegments(segments) ?? { ok: true, segments, trailingSlash: path.trailingSlash };
}

/**
 * Why decoded segments can never name a served file (a dot segment, a separator, NUL, a drive
 * letter, a dotfile outside `/.well-known/`), or undefined when they may. The same rule decides
 * which changed files live reload may announce (docs/live-reload.md).
 */
export function refuseSegments(segments: readonly string[]): (UrlPathResult & { ok: false }) | undefined {
  for (let i = 0; i < segments.length; i++) {
    const refusal = refuseSegment(segments[i]!, i === 0);
    if (refusal) return refusal;
  }
  return undefined;
}

/** `checkUrlPath` on a raw path (what the edge would have decoded). */
export function decodeUrlPath(rawPath: string): UrlPathResult {
  return checkUrlPath(parseRequestPath(rawPath), rawPath);
}

function refuseSegment(segment: string, first: boolean): (UrlPathResult & { ok: false }) | undefined {
  if (segment === '..' || segment === '.') return { ok: false, status: 400, reason: 'dot segment' };
  if (segment.includes('/') || segment.includes('\\'))
    return { ok: false, status: 400, reason: 'encoded or back-slash separator' };
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
