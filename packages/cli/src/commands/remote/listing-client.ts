import { basicAuthorization } from './credentials.js';
import { baseUrl, request, type RequestSettings } from './http.js';
import { joinRemote } from './path-mapping.js';
import { EXIT } from '../../exit-codes.js';
import type { Outcome } from './outcome.js';

// The client side of the sync listing (docs/wire-formats.md "Sync listing"): what a host holds
// under a prefix, and whether it takes batches.

export interface RemoteEntry {
  path: string;
  size: number;
  sha256: string;
}

/** The batch endpoint and its limits, as the listing's closing line announces them. */
export interface BatchOffer {
  path: string;
  maxFiles: number;
  maxFileBytes: number;
  maxBodyBytes: number | null;
  /** The bytes of every field of one batch together (names and values); hosts that say nothing take 1 MiB. */
  maxFieldsBytes?: number;
}

export interface ParsedListing {
  /** By path (a path listed twice: the last line counts). */
  entries: Map<string, RemoteEntry>;
  batch?: BatchOffer;
}

const isEntry = (v: unknown): v is RemoteEntry => {
  const e = v as RemoteEntry;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.path === 'string' &&
    e.path !== '' &&
    Number.isSafeInteger(e.size) &&
    e.size >= 0 &&
    typeof e.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(e.sha256)
  );
};

const isOffer = (v: unknown): v is BatchOffer => {
  const o = v as BatchOffer;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.path === 'string' &&
    o.path.startsWith('/') &&
    Number.isSafeInteger(o.maxFiles) &&
    o.maxFiles > 0 &&
    Number.isSafeInteger(o.maxFileBytes) &&
    (o.maxBodyBytes === null || Number.isSafeInteger(o.maxBodyBytes)) &&
    (o.maxFieldsBytes === undefined || (Number.isSafeInteger(o.maxFieldsBytes) && o.maxFieldsBytes > 0))
  );
};

/**
 * A file line exactly as the host writes it (`JSON.stringify` of `{ path, size, sha256 }`) with a
 * path that needs no escape: read by this one expression, which costs a listing of thousands of
 * lines far less than `JSON.parse` and a check per line (docs/sync.md "Speed"). It takes only what
 * `JSON.parse` would read as the same entry (no escape, no control character, no leading zero);
 * any other line goes through `JSON.parse`.
 */
const PLAIN_ENTRY = /^\{"path":"([^"\\\x00-\x1f]+)","size":(0|[1-9][0-9]*),"sha256":"([0-9a-f]{64})"\}$/;

/**
 * Reads a listing (NDJSON, docs/wire-formats.md "Sync listing"). Throws when it is not one, or was
 * cut off before its closing `{ "done": true }` line: a partial listing must not drive deletions.
 */
export function parseListing(text: string): ParsedListing {
  const entries = new Map<string, RemoteEntry>();
  let done: Record<string, unknown> | undefined;
  for (const line of text.split('\n')) {
    const plain = done ? null : PLAIN_ENTRY.exec(line);
    if (plain) {
      const size = Number(plain[2]);
      if (Number.isSafeInteger(size)) {
        entries.set(plain[1]!, { path: plain[1]!, size, sha256: plain[3]! });
        continue;
      }
    }
    if (line.trim() === '') continue;
    if (done) throw new Error('the listing goes on after its closing line');
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error('the listing has a line that is not JSON');
    }
    if (typeof value === 'object' && value !== null && (value as { done?: unknown }).done === true)
      done = value as Record<string, unknown>;
    else if (isEntry(value)) entries.set(value.path, { path: value.path, size: value.size, sha256: value.sha256 });
    else throw new Error('the listing has a line that is not a file entry');
  }
  if (!done) throw new Error('the listing was cut off (no closing line)');
  return { entries, batch: isOffer(done.batch) ? done.batch : undefined };
}

/**
 * The file lines a host would list for exactly `files` (each as the host writes it, in the order
 * given, which is the host's when `files` is a scan), or undefined when a digest is not known.
 */
export function listingOf(
  files: ReadonlyArray<{ remotePath: string; size: number; sha256?: string }>,
): string | undefined {
  if (files.some((f) => f.sha256 === undefined)) return undefined;
  const lines: string[] = [];
  for (const { remotePath, size, sha256 } of files) {
    lines.push(`{"path":${JSON.stringify(remotePath)},"size":${size},"sha256":"${sha256}"}\n`);
  }
  return lines.join('');
}

/**
 * Reads a listing, as `parseListing` does, unless it is `expected` (from `listingOf` of the local
 * files, or as the local digest cache kept it) and its closing line: then the host holds exactly
 * the local files, which one comparison of the whole text tells, with no line read apart
 * (docs/sync.md "Speed"). The listing and `expected` may be bytes (UTF-8), as they came from the
 * host and from the cache file: then they are compared as bytes, and the listing is decoded only
 * when it differs.
 */
export function readListing(
  listing: string | Buffer,
  expected: string | Buffer | undefined,
): ({ same: true } | ({ same: false } & ParsedListing)) & { batch?: BatchOffer } {
  const closing = expected === undefined ? undefined : after(listing, expected);
  if (closing !== undefined && closing.indexOf('\n') === closing.length - 1) {
    let done: unknown;
    try {
      done = JSON.parse(closing);
    } catch {
      done = undefined;
    }
    if (typeof done === 'object' && done !== null && (done as { done?: unknown }).done === true) {
      const batch = (done as { batch?: unknown }).batch;
      return { same: true, batch: isOffer(batch) ? batch : undefined };
    }
  }
  return { same: false, ...parseListing(typeof listing === 'string' ? listing : listing.toString('utf8')) };
}

/** The text of `listing` after `expected`, when it starts with it; undefined when it does not. */
function after(listing: string | Buffer, expected: string | Buffer): string | undefined {
  if (typeof listing === 'string' && typeof expected === 'string')
    // A slice compared whole is one memory comparison; startsWith goes character by character.
    return listing.slice(0, expected.length) === expected ? listing.slice(expected.length) : undefined;
  const bytes = typeof listing === 'string' ? Buffer.from(listing, 'utf8') : listing;
  const mine = typeof expected === 'string' ? Buffer.from(expected, 'utf8') : expected;
  // Bytes equal are texts equal (UTF-8 is one encoding per text); the whole text is never decoded.
  if (bytes.length < mine.length || bytes.compare(mine, 0, mine.length, 0, mine.length) !== 0) return undefined;
  return bytes.toString('utf8', mine.length);
}

export type ListingResult =
  | { kind: 'listing'; entries: Map<string, RemoteEntry>; batch?: BatchOffer }
  /** The host holds exactly the local files (its listing is theirs). */
  | { kind: 'same'; batch?: BatchOffer }
  /** The host has no listing (an older host, the original): send everything. */
  | { kind: 'unsupported'; status: number }
  | { kind: 'failed'; outcome: Outcome };

/**
 * `GET /wwwroot/api/sync/list` on one host, read against `expected` (`listingOf` the local files,
 * which may still be being read when this is called). 404 and 405 mean a host without the listing.
 */
export async function fetchListing(
  url: string,
  token: string,
  module: string,
  prefix: string | undefined,
  settings: RequestSettings,
  expected: Promise<string | Buffer | undefined> = Promise.resolve(undefined),
): Promise<ListingResult> {
  const query = new URLSearchParams({ moduleName: module, prefix: joinRemote(undefined, prefix ?? '') });
  const outcome = {
    ...(await request(
      `${baseUrl(url)}/wwwroot/api/sync/list?${query}`,
      () => ({ headers: { Authorization: basicAuthorization(token), Accept: 'application/x-ndjson' } }),
      settings,
      { bytes: true },
    )),
    url: baseUrl(url),
  };
  if (!outcome.ok) {
    if (outcome.status === 404 || outcome.status === 405) return { kind: 'unsupported', status: outcome.status };
    return { kind: 'failed', outcome };
  }
  // The body's bytes as they came (`bytes`), never parsed as one JSON document.
  const body = outcome.body as Buffer;
  const mine = await expected.catch(() => undefined);
  try {
    const listing = readListing(body, mine);
    return listing.same
      ? { kind: 'same', batch: listing.batch }
      : { kind: 'listing', entries: listing.entries, batch: listing.batch };
  } catch (err) {
    return {
      kind: 'failed',
      outcome: { ...outcome, ok: false, exit: EXIT.failed, error: `${outcome.url}: ${(err as Error).message}` },
    };
  }
}
