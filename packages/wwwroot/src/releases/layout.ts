import { wwwrootProblems } from '../problem-codes.js';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

// Where a prefix's releases stand on disk (docs/releases.md "Layout on disk").

export const RELEASES_FOLDER = '.ack-releases';
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A refusal the HTTP adapter answers as problem+json with this status and code. */
export class ReleaseError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(problem: { status: number; code: string }, detail: string) {
    super(detail);
    this.status = problem.status;
    this.code = problem.code;
  }
}

/** `HDS/TST/`, `/HDS\TST` → segments `['HDS','TST']`; dot segments and empty prefixes refused. */
export function parsePrefix(raw: string): string[] {
  const segments = raw
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '');
  if (segments.length === 0) throw new ReleaseError(wwwrootProblems.RELEASE_BAD_PREFIX, 'the path prefix is empty');
  for (const s of segments) {
    // Dot names are never served and would clash with the releases folder and temporary files.
    if (s.startsWith('.') || s.includes('\0') || s.includes('%')) {
      throw new ReleaseError(
        wwwrootProblems.RELEASE_BAD_PREFIX,
        `the path prefix has a segment that is not allowed: ${s}`,
      );
    }
  }
  return segments;
}

export function prefixKey(segments: string[]): string {
  return segments.join('%2F');
}

export function keySegments(key: string): string[] {
  return key.split('%2F');
}

/** True for a release id's form (1 to 64 letters, digits, `-` or `_`, not starting with either). */
export const isReleaseId = (id: string): boolean => ID_RE.test(id);

export function checkReleaseId(id: string): string {
  if (!isReleaseId(id)) {
    throw new ReleaseError(wwwrootProblems.RELEASE_BAD_ID, 'a release id is 1 to 64 letters, digits, "-" or "_"');
  }
  return id;
}

export function newReleaseId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:.]/g, '');
  return `r-${stamp}-${Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, '0')}`;
}

/** One prefix's paths under a contract folder. */
export interface PrefixPaths {
  segments: string[];
  prefix: string; // `HDS/TST/`, as shown to people
  key: string;
  /** The live link: `<contract>/HDS/TST`. */
  link: string;
  /** The link being made before the swap: `<contract>/HDS/.TST.ack-link`. */
  tempLink: string;
  /** `<contract>/.ack-releases/HDS%2FTST`. */
  home: string;
}

export function prefixPaths(contractDir: string, segments: string[]): PrefixPaths {
  const link = path.join(contractDir, ...segments);
  const key = prefixKey(segments);
  return {
    segments,
    prefix: `${segments.join('/')}/`,
    key,
    link,
    tempLink: path.join(path.dirname(link), `.${path.basename(link)}.ack-link`),
    home: path.join(contractDir, RELEASES_FOLDER, key),
  };
}

export const releaseDir = (p: PrefixPaths, id: string): string => path.join(p.home, id);
export const manifestPath = (p: PrefixPaths, id: string): string => path.join(p.home, `${id}.json`);
export const stagingDir = (p: PrefixPaths, id: string): string => path.join(p.home, `${id}.staging`);
/**
 * Who staged `id` (the token's name or fingerprint); its mtime is the stage's last activity, moved by
 * each batch, listing or file into the stage (docs/releases.md "Crash safety").
 */
export const stageNotePath = (p: PrefixPaths, id: string): string => path.join(p.home, `.${id}.by`);
/** The release's files' digests, beside its manifest (docs/releases.md "Manifest and history"). */
export const sumsPath = (p: PrefixPaths, id: string): string => path.join(p.home, `${id}.sums`);

/** The id the live link points at, or null (no link, or a link that is not one of ours). */
export async function liveId(p: PrefixPaths): Promise<string | null> {
  let target: string;
  try {
    target = await fs.readlink(p.link);
  } catch {
    return null;
  }
  const resolved = path.resolve(path.dirname(p.link), target);
  return path.dirname(resolved) === p.home ? path.basename(resolved) : null;
}

/**
 * True when a file of the contract folder lies under a release prefix (a prefix with a folder in
 * `.ack-releases`). Read from disk on each call: for the few callers that are not on the request
 * path (the live-reload watcher).
 */
export function isUnderReleasePrefix(contractDir: string, absolute: string): boolean {
  const rel = path.relative(contractDir, absolute);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
  const segments = rel.split(path.sep);
  let keys: string[];
  try {
    keys = fsSync.readdirSync(path.join(contractDir, RELEASES_FOLDER));
  } catch {
    return false;
  }
  return keys.some((k) => {
    const prefix = keySegments(k);
    return prefix.length < segments.length && prefix.every((s, i) => s === segments[i]);
  });
}
