/**
 * Conditional GET (RFC 9110 §13.2.2): `If-None-Match` decides when present (weak comparison, `*`,
 * a list); otherwise `If-Modified-Since` (second precision). A request's own `Cache-Control:
 * no-cache` is an instruction to caches on the way, not to the origin, so it does not prevent a
 * 304 (fetch() adds it to every request that carries validators; the `fresh` package would then
 * never answer 304).
 */
export function notModified(
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
  etag: string,
  lastModified: string,
): boolean {
  if (ifNoneMatch !== undefined) {
    const wanted = ifNoneMatch.trim();
    if (wanted === '*') return true;
    const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
    for (const candidate of wanted.split(',')) {
      const tag = candidate.trim();
      if ((tag.startsWith('W/') ? tag.slice(2) : tag) === opaque) return true;
    }
    return false;
  }
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    const modified = Date.parse(lastModified);
    return !Number.isNaN(since) && !Number.isNaN(modified) && modified <= since;
  }
  return false;
}

/**
 * The preconditions a client sets to act only on the version it knows (RFC 9110 §13.2.2, steps 1
 * and 2): `If-Match` decides when present (strong comparison, `*`, a list); otherwise
 * `If-Unmodified-Since` (second precision; a date that does not parse is ignored). True when the
 * file is not that version: the answer is 412 and no body.
 */
export function preconditionFailed(
  ifMatch: string | undefined,
  ifUnmodifiedSince: string | undefined,
  etag: string,
  lastModified: string,
): boolean {
  if (ifMatch !== undefined) {
    const wanted = ifMatch.trim();
    if (wanted === '*') return false;
    if (etag.startsWith('W/')) return true;
    for (const candidate of wanted.split(',')) if (candidate.trim() === etag) return false;
    return true;
  }
  if (ifUnmodifiedSince !== undefined) {
    const since = Date.parse(ifUnmodifiedSince);
    const modified = Date.parse(lastModified);
    return !Number.isNaN(since) && !Number.isNaN(modified) && modified > since;
  }
  return false;
}
