import parseRange from 'range-parser';

/** What a `Range` header makes of a representation of `size` bytes: the whole, one slice, or 416. */
export type RangeAnswer = { status: 200 } | { status: 206; start: number; end: number } | { status: 416 };

/**
 * The answer to a `Range` header (docs/static-files.md "Responses"): one satisfiable byte range
 * (overlapping or adjacent ones are merged first) is a 206 of that slice; a malformed header,
 * another unit or several ranges is the whole representation (HTTP lets a server ignore `Range`);
 * nothing satisfiable is 416. Pure.
 */
export function rangeAnswer(size: number, range: string): RangeAnswer {
  const eq = range.indexOf('=');
  // HTTP: a unit other than bytes (compared ignoring case) is ignored, even where its numbers
  // would not fit the file; range-parser would answer those with 416.
  if (eq === -1 || range.slice(0, eq).toLowerCase() !== 'bytes') return { status: 200 };
  // HTTP: a suffix longer than the file asks for all of it; range-parser would call it unsatisfiable.
  const set = range
    .slice(eq + 1)
    .split(',')
    .map((part) => {
      const suffix = /^\s*-\s*(\d+)\s*$/.exec(part);
      return suffix && Number(suffix[1]) > size ? `-${size}` : part;
    });
  const ranges = parseRange(size, `bytes=${set.join(',')}`, { combine: true });
  if (ranges === -1) return { status: 416 };
  if (ranges !== -2 && ranges.length === 1) return { status: 206, start: ranges[0]!.start, end: ranges[0]!.end };
  return { status: 200 };
}

/**
 * Whether an `If-Range` validator names this version: an entity tag must equal the (strong) ETag,
 * so a weak one never does; a date must not be older than the modification time (second
 * precision). Pure.
 */
export function ifRangeHolds(ifRange: string, etag: string, mtimeMs: number): boolean {
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === etag;
  const since = Date.parse(ifRange);
  return !Number.isNaN(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}
