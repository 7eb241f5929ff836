/**
 * The URL path of a request, decoded once at the edge and carried on `req.ack.path`, so later
 * layers (route prefixes, shared files, static folders) neither decode nor lower-case it again.
 *
 * Each segment is decoded on its own, so an encoded separator (`%2f`) stays inside its segment and
 * never becomes a separator; a double encoding (`%252e`) stays a literal name. Empty segments
 * (`//`, a trailing `/`) are dropped. See docs/pipeline.md.
 */
export interface RequestPath {
  /** Decoded segments, empty ones dropped. */
  readonly segments: readonly string[];
  /** `/` + the segments lower-cased (a decoded `/` inside a segment kept as `%2f`): for case-insensitive matches. */
  readonly folded: string;
  /** The raw path ends with `/` (and is not just `/`). */
  readonly trailingSlash: boolean;
  /** The raw path has an empty segment inside (`//`): `folded` then differs from the exact path. */
  readonly emptySegments: boolean;
  /** False when a segment's percent-encoding is malformed (the edge answers 400). */
  readonly wellFormed: boolean;
}

export function parseRequestPath(rawPath: string): RequestPath {
  const trailingSlash = rawPath.length > 1 && rawPath.endsWith('/');
  // The common case, a path with nothing to decode and no empty segment: one split, one lower-casing.
  if (!rawPath.includes('%') && !rawPath.includes('//') && rawPath.startsWith('/')) {
    const end = trailingSlash ? rawPath.length - 1 : rawPath.length;
    const plain = rawPath.slice(0, end);
    return {
      segments: plain.length <= 1 ? [] : plain.slice(1).split('/'),
      folded: plain.length === 0 ? '/' : plain.toLowerCase(),
      trailingSlash,
      emptySegments: false,
      wellFormed: true,
    };
  }
  const parts = rawPath.split('/');
  const segments: string[] = [];
  let folded = '';
  let wellFormed = true;
  for (let i = 0; i < parts.length; i++) {
    let segment = parts[i]!;
    if (segment === '') continue;
    if (segment.includes('%')) {
      try {
        segment = decodeURIComponent(segment);
      } catch {
        wellFormed = false;
      }
    }
    segments.push(segment);
    const lower = segment.toLowerCase();
    folded += '/' + (lower.includes('/') ? lower.replaceAll('/', '%2f') : lower);
  }
  return {
    segments,
    folded: folded === '' ? '/' : folded,
    trailingSlash,
    emptySegments: rawPath.includes('//'),
    wellFormed,
  };
}

/**
 * The path folded as `folded` is, but with its empty segments kept: for the few matches that must
 * be exact (the shared-file catalog, as the original compares it: docs/static-files.md).
 */
export function foldExactly(rawPath: string): string {
  return rawPath
    .split('/')
    .map((segment) => {
      let decoded = segment;
      try {
        if (segment.includes('%')) decoded = decodeURIComponent(segment);
      } catch {
        // Malformed: the edge has answered 400 already.
      }
      const lower = decoded.toLowerCase();
      return lower.includes('/') ? lower.replaceAll('/', '%2f') : lower;
    })
    .join('/');
}
