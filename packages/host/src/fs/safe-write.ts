// Why this file is long: staging, the atomic rename, fsync of files and folders and the clean-up
// of temporaries are one protocol (docs/reliability.md); each step relies on the others' order.
import { createHash, randomBytes } from 'node:crypto';
import fsCallback, { type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathKey, targetLocks } from './keyed-lock.js';
import { offThreadWriteAvailable, writeOffThread } from './off-thread-write.js';
import { namespaceTag, ownerPart } from './temp-owner.js';

/**
 * The one way this project writes a file that others read while it runs (sync upload, contract
 * sync): stream into a temporary file in the target's folder, flush it to disk, then rename it
 * over the target. A reader sees the old file or the new one, never a part; a write that fails or
 * is cut off leaves the old file as it was and no temporary file behind.
 *
 * Writing is split in two so that several targets can change together ("both or neither"):
 * `stageStream`/`stageCopy` produce staged temporary files, `commitStaged` renames them all over
 * their targets and puts the old files back if any rename fails.
 */

/** A body over the byte limit. Nothing was kept. */
export class FileTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`The file is over ${limit} bytes.`);
    this.name = 'FileTooLargeError';
    this.limit = limit;
  }
}

/** A temporary file, complete and flushed, waiting to be renamed over its target (or discarded). */
export interface StagedFile {
  /** Absolute path of the temporary file. */
  readonly tempPath: string;
  readonly bytes: number;
  /** Lowercase hex SHA-256 of the content. */
  readonly sha256: string;
}

/** What this module and `batch-staging.ts` keep beside a staged file's public facts. */
export interface StagedInternal extends StagedFile {
  /** The first folder `mkdir` created for this file, removed again (if empty) on discard. */
  createdDir?: string;
  /** Written but not yet flushed: `flushStaged` (batch-staging.ts) flushes it before any commit. */
  unflushed?: boolean;
}

export interface StageOptions {
  /** Most bytes accepted; one more and the write fails with `FileTooLargeError`. */
  maxBytes?: number;
  /**
   * Where to stage when the folder asked for does not exist yet, rather than making it: a batch
   * makes a file's folders only when that file commits, in the order sent (docs/sync.md "Batches").
   */
  orIn?: string;
  /**
   * Folders already found missing by this request (with `orIn`): a file for one of them is staged
   * in `orIn` at once, without a failed open first. Filled as folders are found missing.
   */
  missing?: Set<string>;
}

const TEMP_SUFFIX = '.ack-tmp';
/** Bytes a staged file's write stream gathers while a write is in flight. */
const WRITE_BYTES = 1024 * 1024;
/** A staged file is also flushed in the background every this many bytes. */
const FLUSH_BEHIND_BYTES = 8 * 1024 * 1024;
/** A body declared at least this big is hashed and written off the main thread (`off-thread-write.ts`). */
const OFF_THREAD_BYTES = 8 * 1024 * 1024;

/**
 * Unique per process (random, drawn once) and per write (a counter): hosts and workers sharing a
 * folder never pick the same name, and a name costs no call into the random source per file. The
 * name also says which process wrote it (`temp-owner.ts`), so that the start-up sweep can remove
 * at once what a process that died left.
 */
const PROCESS_TAG = randomBytes(4).toString('hex') + ownerPart(namespaceTag(), process.pid);
let tempCounter = 0;

/** Temporary names are dotfiles (never served) beside the target, unique per write. */
export function tempName(dir: string, hint: string): string {
  const base = path
    .basename(hint)
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 60);
  tempCounter = (tempCounter + 1) % Number.MAX_SAFE_INTEGER;
  return path.join(dir, `.${base}.${PROCESS_TAG}${tempCounter.toString(36)}${TEMP_SUFFIX}`);
}

/** True for a name `stageStream` gives its temporary files (lets tests and tools recognise leftovers). */
export function isTemporaryFileName(name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX);
}

/**
 * Opens a new temporary file in `dir` with `open` (a `FileHandle` or a plain descriptor). The folder
 * usually exists (a batch writes many files into few folders): open first, and make the folder only
 * when it is missing. A concurrent failed write may remove a folder it created just as we open a
 * file in it: retry.
 */
async function openTempWith<T>(
  dir: string,
  hint: string,
  orIn: string | undefined,
  open: (tempPath: string) => Promise<T>,
  missing?: Set<string>,
): Promise<{ opened: T; tempPath: string; createdDir?: string }> {
  let createdDir: string | undefined;
  if (orIn !== undefined && missing?.has(dir)) dir = orIn;
  for (let attempt = 0; ; attempt++) {
    const tempPath = tempName(dir, hint);
    try {
      return { opened: await open(tempPath), tempPath, createdDir };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
    }
    // Missing, and not to be made now: staged in `orIn` (made if need be) and moved at commit.
    if (orIn !== undefined && dir !== orIn) {
      missing?.add(dir);
      dir = orIn;
      continue;
    }
    const made = await fs.mkdir(dir, { recursive: true });
    createdDir ??= made;
  }
}

async function openTemp(
  dir: string,
  hint: string,
  orIn?: string,
  missing?: Set<string>,
): Promise<{ handle: fs.FileHandle; tempPath: string; createdDir?: string }> {
  const { opened, ...rest } = await openTempWith(dir, hint, orIn, (p) => fs.open(p, 'wx', 0o644), missing);
  return { handle: opened, ...rest };
}

/**
 * As `openTemp`, with a plain descriptor: a small file staged from memory is opened, written and
 * closed with three calls, without a `FileHandle` and its streams (docs/sync.md "Speed").
 */
export async function openTempFd(
  dir: string,
  hint: string,
  orIn?: string,
  missing?: Set<string>,
): Promise<{ fd: number; tempPath: string; createdDir?: string }> {
  const { opened, ...rest } = await openTempWith(
    dir,
    hint,
    orIn,
    (p) =>
      new Promise<number>((resolve, reject) =>
        fsCallback.open(p, 'wx', 0o644, (err, fd) => (err ? reject(err) : resolve(fd))),
      ),
    missing,
  );
  return { fd: opened, ...rest };
}

/**
 * As `openTempFd`, with a plain call, for `batch-staging.ts`: in `dir`, else (when `dir` is
 * missing) in `orIn`. Returns `undefined` when both are missing: `openTempFd` makes the folder.
 */
export function openTempSync(
  dir: string,
  hint: string,
  orIn: string | undefined,
  missing: Set<string> | undefined,
): { fd: number; tempPath: string } | undefined {
  if (orIn !== undefined && missing?.has(dir)) dir = orIn;
  for (;;) {
    const tempPath = tempName(dir, hint);
    try {
      return { fd: fsCallback.openSync(tempPath, 'wx', 0o644), tempPath };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (orIn === undefined || dir === orIn) return undefined;
    missing?.add(dir);
    dir = orIn;
  }
}

/** What a caller knows of a body that may be big: a big one is written off the main thread. */
export interface BigBody {
  /** The length the request declares. */
  declaredBytes: number;
  /** The chunks are the body's own (`OffThreadWriteOptions.chunksOwned`). */
  chunksOwned: boolean;
}

/**
 * Streams `source` into a new temporary file in `dir` (created if missing), counting bytes and
 * hashing as it goes, and flushes it. On any failure (source error, limit, disk) the temporary file
 * is removed and the error rethrown.
 */
export async function stageStream(
  dir: string,
  source: Readable,
  options: StageOptions & { nameHint?: string; bigBody?: BigBody } = {},
): Promise<StagedFile> {
  if (options.bigBody && options.bigBody.declaredBytes >= OFF_THREAD_BYTES && offThreadWriteAvailable())
    return stageOffThread(dir, source, { ...options, chunksOwned: options.bigBody.chunksOwned });
  const { handle, tempPath, createdDir } = await openTemp(
    dir,
    options.nameHint ?? 'upload',
    options.orIn,
    options.missing,
  );
  const hash = createHash('sha256');
  let bytes = 0;
  const limit = options.maxBytes ?? Infinity;
  // Write-behind: a big file is also flushed every FLUSH_BEHIND_BYTES on the way, in the background,
  // so that the disk writes while the rest arrives and the final flush has little left to do (the
  // system would otherwise keep it all in memory until then; docs/sync.md "Speed").
  let flushedUpTo = 0;
  let behind: Promise<void> | undefined;
  let behindError: Error | undefined;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      if (bytes > limit) return cb(new FileTooLargeError(limit));
      hash.update(chunk);
      if (!behind && bytes - flushedUpTo >= FLUSH_BEHIND_BYTES) {
        flushedUpTo = bytes;
        behind = handle
          .datasync()
          .catch((err: Error) => void (behindError ??= err))
          .finally(() => (behind = undefined));
      }
      cb(null, chunk);
    },
    // The last write-behind flush ends before the file's own flush and close.
    flush(cb) {
      void Promise.resolve(behind).then(() => cb(behindError ?? null));
    },
  });
  const staged: StagedInternal = { tempPath, bytes: 0, sha256: '', createdDir };
  try {
    // `flush` syncs the file to disk before the stream closes the handle. Chunks from the socket are
    // small (tens of KiB); while one write is in flight the next ones gather, up to WRITE_BYTES, and
    // go in one vectored write rather than a thread-pool round trip each (docs/sync.md "Speed").
    await pipeline(source, meter, handle.createWriteStream({ flush: true, highWaterMark: WRITE_BYTES }));
  } catch (err) {
    await handle.close().catch(() => undefined);
    source.resume?.();
    await discardStaged(staged);
    throw err;
  }
  return Object.assign(staged, { bytes, sha256: hash.digest('hex') });
}

/** As `stageStream`, with the hashing and the writes on the upload write thread (`off-thread-write.ts`). */
async function stageOffThread(
  dir: string,
  source: Readable,
  options: StageOptions & { nameHint?: string; chunksOwned: boolean },
): Promise<StagedFile> {
  const { fd, tempPath, createdDir } = await openTempFd(
    dir,
    options.nameHint ?? 'upload',
    options.orIn,
    options.missing,
  );
  const staged: StagedInternal = { tempPath, bytes: 0, sha256: '', createdDir };
  const limit = options.maxBytes ?? Infinity;
  let written: { bytes: number; sha256: string };
  try {
    written = await writeOffThread(fd, source, {
      maxBytes: limit,
      tooLarge: () => new FileTooLargeError(limit),
      flushEvery: FLUSH_BEHIND_BYTES,
      chunksOwned: options.chunksOwned,
    });
  } catch (err) {
    await closeFd(fd);
    source.resume?.();
    await discardStaged(staged);
    throw err;
  }
  await closeFd(fd);
  return Object.assign(staged, written);
}

const closeFd = (fd: number) => new Promise<void>((resolve) => fsCallback.close(fd, () => resolve()));

/** Stages a copy of a staged file in another folder (the second target of a "both or neither" write). */
export async function stageCopy(dir: string, from: StagedFile): Promise<StagedFile> {
  const { handle, tempPath, createdDir } = await openTemp(dir, from.tempPath.replace(TEMP_SUFFIX, ''));
  const staged: StagedInternal = { tempPath, bytes: from.bytes, sha256: from.sha256, createdDir };
  try {
    const source = await fs.open(from.tempPath, 'r');
    await pipeline(source.createReadStream(), handle.createWriteStream({ flush: true }));
  } catch (err) {
    await handle.close().catch(() => undefined);
    await discardStaged(staged);
    throw err;
  }
  return staged;
}

/**
 * Returns a staged file that lives in `dir`: itself when it already does, else moved there (rename,
 * or copy when `dir` is on another file system). Used when a file arrived before the fields that
 * name its target and had to be staged elsewhere first.
 */
export async function moveStaged(staged: StagedFile, dir: string): Promise<StagedFile> {
  if (path.dirname(staged.tempPath) === path.resolve(dir)) return staged;
  const made = await fs.mkdir(dir, { recursive: true });
  const tempPath = tempName(dir, staged.tempPath.replace(TEMP_SUFFIX, ''));
  try {
    await fs.rename(staged.tempPath, tempPath);
    await discardStaged(staged); // only the folder it may have created is left to tidy
    return { tempPath, bytes: staged.bytes, sha256: staged.sha256, createdDir: made } as StagedInternal;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const copy = await stageCopy(dir, staged);
  await discardStaged(staged);
  // The folder made above is this file's too: a discard of the copy removes it when left empty.
  return { ...copy, createdDir: made ?? (copy as StagedInternal).createdDir } as StagedInternal;
}

/**
 * Removes staged temporary files (and the folders created for them, when left empty). Never throws.
 * The files go first, then the folders: a folder one file made may hold others of the same call
 * (files staged together share folders, and only the first one to arrive made it).
 */
export async function discardStaged(...files: Array<StagedFile | undefined>): Promise<void> {
  const present = files.filter((file): file is StagedInternal => file !== undefined);
  for (const file of present) await fs.rm(file.tempPath, { force: true }).catch(() => undefined);
  const made = present.filter((file) => file.createdDir !== undefined);
  // Again while a round removes something: a folder is empty only once the others' are gone.
  for (let removed = 1; removed > 0;) {
    removed = 0;
    for (const file of made) removed += await removeEmptyFolders(path.dirname(file.tempPath), file.createdDir!);
  }
}

/** Removes `from` and its parents up to `upTo` while empty; returns how many went. */
async function removeEmptyFolders(from: string, upTo: string): Promise<number> {
  const stop = path.resolve(upTo);
  let removed = 0;
  for (let dir = path.resolve(from); dir === stop || dir.startsWith(stop + path.sep); dir = path.dirname(dir)) {
    try {
      await fs.rmdir(dir);
      removed++;
    } catch (err) {
      // Not empty (another write is using it); one already removed is passed on the way up.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') break;
    }
    if (dir === stop) break;
  }
  return removed;
}

/** Renames with a few retries on Windows, where a reader holding the target briefly blocks it. */
async function renameRetrying(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fs.rename(from, to);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (process.platform !== 'win32' || attempt >= 5 || !['EPERM', 'EACCES', 'EBUSY'].includes(code ?? '')) throw err;
      await new Promise((r) => setTimeout(r, 20 * (attempt + 1)));
    }
  }
}

/** Makes the renames made in these folders durable: one flush per folder, however many files changed there. */
export async function syncFolders(dirs: Iterable<string>): Promise<void> {
  await Promise.all([...new Set(dirs)].map(syncFolder));
}

async function syncFolder(dir: string): Promise<void> {
  // Makes the rename itself durable; not possible on every platform, so best effort.
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    /* ignore */
  }
}

/**
 * The target's own facts (a symlink is not followed), or undefined when there is nothing there. A
 * plain synchronous call: a new file's missing target costs no error object, and a stat is a few
 * microseconds against a thread-pool round trip (docs/sync.md "Speed").
 */
function lstatIfAny(p: string): Stats | undefined {
  return fsCallback.lstatSync(p, { throwIfNoEntry: false });
}

/** A hard link keeps the old content under a second name for free; copy where links are refused. */
async function keepOldCopy(target: string): Promise<string> {
  const backup = tempName(path.dirname(target), `${path.basename(target)}.old`);
  try {
    await fs.link(target, backup);
  } catch {
    await fs.copyFile(target, backup);
  }
  return backup;
}

export interface StagedTarget {
  staged: StagedFile;
  /** Absolute path the staged file becomes. */
  target: string;
}

/**
 * Renames every staged file over its target: all of them, or (when one rename fails) none — the
 * targets renamed so far get their old content back (or are removed if they were new). Returns,
 * per target, whether a file was there before. The staged files are consumed either way.
 *
 * Commits and deletes of the same target run one at a time (`targetLocks`), so targets written
 * together always end with one writer's bytes.
 *
 * The target folders are flushed before this returns, unless `syncFolders` is false: then the
 * caller flushes them itself with `syncFolders()` before it says the write is done (a batch flushes
 * each folder once for all its files).
 */
export async function commitStaged(items: StagedTarget[], options: { syncFolders?: boolean } = {}): Promise<boolean[]> {
  return targetLocks.run(
    items.map((i) => pathKey(i.target)),
    () => commitLocked(items, options.syncFolders !== false),
  );
}

/**
 * One staged file renamed over its target now, with synchronous calls: a batch commits thousands
 * of small files, and a `stat`, `mkdir` or `rename` takes microseconds where a thread-pool round
 * trip each, one file after another, took most of a first push (docs/sync.md "Speed"). The file
 * may be staged in another folder of the same file system (its own folder was missing): the
 * folder is made (unless `madeFolders` says this batch made it already) and the file renamed
 * straight to its target. Returns whether a file was there before, or `undefined` when it must go
 * the asynchronous way (`moveStaged`, then `commitStaged`): another write holds the target, the
 * stage is on another file system, or a Windows rename may need its retries. Throws what the
 * asynchronous way would throw; a folder it made is removed again (when left empty) and the
 * staged file is left to the caller to discard.
 */
export function commitStagedSync(staged: StagedFile, target: string, madeFolders: Set<string>): boolean | undefined {
  if (process.platform === 'win32' || targetLocks.isHeld(pathKey(target))) return undefined;
  const stat = lstatIfAny(target);
  if (stat?.isDirectory()) throw Object.assign(new Error(`${target} is a folder`), { code: 'EISDIR' });
  const dir = path.dirname(target);
  let made: string | undefined;
  if (path.dirname(staged.tempPath) !== dir && !madeFolders.has(dir)) {
    made = fsCallback.mkdirSync(dir, { recursive: true });
    madeFolders.add(dir);
  }
  try {
    fsCallback.renameSync(staged.tempPath, target);
  } catch (err) {
    if (made !== undefined) {
      madeFolders.delete(dir);
      removeEmptyFoldersSync(dir, made);
    }
    if ((err as NodeJS.ErrnoException).code === 'EXDEV') return undefined;
    // A folder this batch made and someone removed since: made again once, by the way above.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && made === undefined && madeFolders.delete(dir))
      return commitStagedSync(staged, target, madeFolders);
    throw err;
  }
  return stat !== undefined;
}

function removeEmptyFoldersSync(from: string, upTo: string): void {
  const stop = path.resolve(upTo);
  for (let dir = path.resolve(from); dir === stop || dir.startsWith(stop + path.sep); dir = path.dirname(dir)) {
    try {
      fsCallback.rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === stop) return;
  }
}

async function commitLocked(items: StagedTarget[], flushFolders: boolean): Promise<boolean[]> {
  const backups: Array<string | undefined> = [];
  const existed: boolean[] = [];
  let renamed = 0;
  try {
    for (const { target } of items) {
      const stat = lstatIfAny(target);
      if (stat?.isDirectory()) throw Object.assign(new Error(`${target} is a folder`), { code: 'EISDIR' });
      const was = stat !== undefined;
      existed.push(was);
      backups.push(items.length > 1 && was ? await keepOldCopy(target) : undefined);
    }
    for (const { staged, target } of items) {
      await renameRetrying(staged.tempPath, target);
      renamed++;
    }
  } catch (err) {
    for (let i = renamed - 1; i >= 0; i--) {
      const backup = backups[i];
      const target = items[i]!.target;
      await (backup ? fs.rename(backup, target) : fs.rm(target, { force: true })).catch(() => undefined);
      backups[i] = undefined;
    }
    await discardStaged(...items.slice(renamed).map((i) => i.staged));
    await Promise.all(backups.map((b) => (b ? fs.rm(b, { force: true }).catch(() => undefined) : undefined)));
    throw err;
  }
  await Promise.all(backups.map((b) => (b ? fs.rm(b, { force: true }).catch(() => undefined) : undefined)));
  if (flushFolders) await syncFolders(items.map((i) => path.dirname(i.target)));
  return existed;
}

/** Writes a whole file atomically (temporary file beside it, flushed, renamed). */
export async function writeFileAtomic(
  target: string,
  data: Readable | Buffer | string,
  options: StageOptions = {},
): Promise<StagedFile> {
  const source = typeof data === 'string' || Buffer.isBuffer(data) ? Readable.from([Buffer.from(data)]) : data;
  const staged = await stageStream(path.dirname(target), source, { ...options, nameHint: target });
  await commitStaged([{ staged, target }]);
  return { tempPath: target, bytes: staged.bytes, sha256: staged.sha256 };
}

/**
 * Removes files (never folders) together: each existing target is first renamed aside; if any of
 * those renames fails the others are put back and the error rethrown, so either all are removed
 * or none. Returns, per target, whether a file was there. Holds the same per-target lock as
 * `commitStaged`.
 */
export async function removeFilesTogether(targets: string[]): Promise<boolean[]> {
  return targetLocks.run(targets.map(pathKey), () => removeLocked(targets));
}

async function removeLocked(targets: string[]): Promise<boolean[]> {
  const aside: Array<{ target: string; backup: string } | undefined> = [];
  try {
    for (const target of targets) {
      let stat;
      try {
        stat = await fs.lstat(target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR')
          throw err;
        aside.push(undefined);
        continue;
      }
      if (stat.isDirectory()) throw Object.assign(new Error(`${target} is a folder`), { code: 'EISDIR' });
      const backup = tempName(path.dirname(target), `${path.basename(target)}.deleted`);
      try {
        await renameRetrying(target, backup);
      } catch (err) {
        // Removed by a concurrent delete between lstat and rename: it is gone, as asked.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        aside.push(undefined);
        continue;
      }
      aside.push({ target, backup });
    }
  } catch (err) {
    for (const item of aside.reverse()) if (item) await fs.rename(item.backup, item.target).catch(() => undefined);
    throw err;
  }
  await Promise.all(aside.map((item) => (item ? fs.rm(item.backup, { force: true }) : undefined)));
  return aside.map(Boolean);
}
