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
  for (const part of parts) {
    if (part === '') continue;
    const segment = decodeSegment(part);
    if (segment === undefined) wellFormed = false;
    segments.push(segment ?? part);
    folded += '/' + foldSegment(segment ?? part);
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
    .map((part) => foldSegment(decodeSegment(part) ?? part))
    .join('/');
}

/** One segment decoded once; undefined when its percent-encoding is malformed. */
function decodeSegment(part: string): string | undefined {
  if (!part.includes('%')) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/** A decoded segment as matches compare it: lower case, a decoded `/` kept as `%2f`. */
function foldSegment(segment: string): string {
  const lower = segment.toLowerCase();
  return lower.includes('/') ? lower.replaceAll('/', '%2f') : lower;
}
