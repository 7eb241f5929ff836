import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { wwwrootProblems } from '../problem-codes.js';
import { writeFileAtomic } from '@ack/host';
import { isTemporaryFileName, withFileLock } from '@ack/host/serving';
import {
  RELEASES_FOLDER,
  ReleaseError,
  checkReleaseId,
  isReleaseId,
  keySegments,
  liveId,
  manifestPath,
  newReleaseId,
  parsePrefix,
  prefixPaths,
  releaseDir,
  stageNotePath,
  stagingDir,
  sumsPath,
  type PrefixPaths,
} from './layout.js';
import { changedFiles, changedSums } from './diff.js';
import { TreeChangedError, formatSums, linkTree, parseSums, treeSummary, type TreeSums } from './tree-digest.js';

// The release store of one contract folder (docs/releases.md): stage, switch, rollback, list,
// prune, grace and recover. Pure file-system work; the HTTP adapter and the CLI sit on top.

export interface ReleaseEdit {
  time: string;
  path: string;
  change: string;
}

export interface ReleaseManifest {
  id: string;
  prefix: string;
  time: string;
  by: string;
  files: number;
  bytes: number;
  digest: string;
  /** The release live before this one was switched to, and when (the grace period's start). */
  previous?: string;
  switchedAt?: string;
  edits: ReleaseEdit[];
}

export type ReleaseInfo = Omit<ReleaseManifest, 'previous' | 'switchedAt'> & { live: boolean };

/** Names of the steps a crash test may stop at (docs/releases.md "Crash safety"). */
export type ReleaseStep = 'staged' | 'renamed' | 'manifest' | 'temp-link' | 'switched' | 'adopt-manifest' | 'adopted';

export interface ReleaseStoreOptions {
  contractDir: string;
  /** `Releases:Keep`, default 5. */
  keep?: number;
  /** `Releases:GraceSeconds` in ms, default 10 minutes. */
  graceMs?: number;
  now?: () => number;
  /** Called after each step; a test throws from it to leave the disk as a crash would. */
  afterStep?: (step: ReleaseStep) => void;
}

/**
 * Where a switch's time went, in milliseconds (docs/wire-formats.md "Sync releases": the answer's
 * `Server-Timing`): `digest` the tree digest (`read` files of it read), `switch` the link's
 * replacement, `prune` old releases.
 */
export type SwitchTimings = Partial<Record<'digest' | 'switch' | 'prune', number>> & {
  /** Files the digest read (the others were known). */
  read?: number;
  /** Releases the prune removed. */
  pruned?: number;
};

const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

export interface Staging {
  id: string;
  prefix: string;
  /** The tree to write into: a hard-linked copy of the live release. */
  dir: string;
}

/** Stages whose written files' digests are kept in memory at once. */
const STAGES_NOTED = 16;
/** Releases whose digests are kept in memory (a few prefixes' live and previous ones). */
const SUMS_KEPT = 8;
const factsKey = (st: { ino: bigint; size: bigint; mtimeNs: bigint }) => `${st.ino}:${st.size}:${st.mtimeNs}`;

/** A stage nothing was written into for this long is abandoned; the prefix's next stage removes it. */
export const ABANDONED_STAGE_MS = 60 * 60 * 1000;

/** The lock file of a prefix's folder; never debris, never a release. */
const LOCK_FILE = '.lock';

export class ReleaseStore {
  private readonly keep: number;
  private readonly graceMs: number;
  private readonly now: () => number;
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Digests of files written into a stage, by the stage's folder (its commit need not read them). */
  private readonly staged = new Map<string, TreeSums>();
  /** Digests read or written lately, by their file, with that file's facts when read. */
  private readonly sums = new Map<string, { key: string; sums: TreeSums }>();

  constructor(private readonly options: ReleaseStoreOptions) {
    this.keep = Math.max(1, options.keep ?? 5);
    this.graceMs = options.graceMs ?? 600_000;
    this.now = options.now ?? Date.now;
  }

  private step(s: ReleaseStep): void {
    this.options.afterStep?.(s);
  }

  /**
   * Switches, rollbacks and prunes of one prefix run one at a time: in this process by a chain, and
   * across processes (workers) by a lock file in the prefix's folder (docs/releases.md "Workers").
   */
  private serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const home = path.join(this.options.contractDir, RELEASES_FOLDER, key);
    const locked = async () => {
      await fs.mkdir(home, { recursive: true });
      return withFileLock(path.join(home, LOCK_FILE), work);
    };
    const run = (this.chains.get(key) ?? Promise.resolve()).then(locked, locked);
    this.chains.set(
      key,
      run.catch(() => undefined),
    );
    return run;
  }

  paths(prefix: string): PrefixPaths {
    return prefixPaths(this.options.contractDir, parsePrefix(prefix));
  }

  /** Prefixes that have releases here. */
  async prefixes(): Promise<string[]> {
    const names = await fs.readdir(path.join(this.options.contractDir, RELEASES_FOLDER)).catch(() => [] as string[]);
    return names.filter((n) => !n.startsWith('.')).map((n) => `${keySegments(n).join('/')}/`);
  }

  private async refuseNested(p: PrefixPaths): Promise<void> {
    for (const other of await this.prefixes()) {
      if (other === p.prefix) continue;
      if (other.startsWith(p.prefix) || p.prefix.startsWith(other)) {
        throw new ReleaseError(
          wwwrootProblems.RELEASE_NESTED_PREFIX,
          `${p.prefix} is nested with the release prefix ${other}`,
        );
      }
    }
  }

  /** Begins a release: a staging tree of hard links to the live release (or empty). */
  async stage(prefix: string, opts: { id?: string; by?: string } = {}): Promise<Staging> {
    const p = this.paths(prefix);
    await this.refuseNested(p);
    await this.serial(p.key, () => this.adopt(p, opts.by ?? 'adopted'));
    await this.discardAbandoned(p);
    const id = opts.id !== undefined ? checkReleaseId(opts.id) : newReleaseId(this.now());
    if (await exists(releaseDir(p, id)))
      throw new ReleaseError(wwwrootProblems.RELEASE_ID_TAKEN, `release ${id} exists`);
    const dir = stagingDir(p, id);
    try {
      await fs.mkdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new ReleaseError(wwwrootProblems.RELEASE_ID_TAKEN, `release ${id} is being staged`);
      }
      throw err;
    }
    const live = await liveId(p);
    if (live) await linkTree(releaseDir(p, live), dir);
    await fs.writeFile(stageNotePath(p, id), opts.by ?? '').catch(() => undefined);
    await fs.writeFile(path.join(p.home, `.${id}.base`), await this.baseOf(p, live));
    return { id, prefix: p.prefix, dir };
  }

  /**
   * Removes the prefix's stages that nothing wrote into for ABANDONED_STAGE_MS: their client, or the
   * worker that held them, went away, and while peers keep serving no start-up recovery runs to
   * remove them (docs/releases.md "Crash safety").
   */
  private async discardAbandoned(p: PrefixPaths): Promise<void> {
    for (const name of await fs.readdir(p.home).catch(() => [] as string[])) {
      const id = name.endsWith('.staging') ? name.slice(0, -'.staging'.length) : '';
      if (!isReleaseId(id)) continue;
      const last =
        (await fs.stat(stageNotePath(p, id)).catch(() => null)) ?? (await fs.stat(stagingDir(p, id)).catch(() => null));
      if (last && this.now() - last.mtimeMs > ABANDONED_STAGE_MS) await this.discard(p.prefix, id);
    }
  }

  /**
   * What a stage was built on: the live release and how many one-file edits it had. A commit on
   * another base would drop what changed meanwhile (docs/releases.md "Two pushes at once").
   */
  private async baseOf(p: PrefixPaths, live: string | null): Promise<string> {
    if (!live) return '';
    return `${live}+${(await this.readManifest(p, live))?.edits.length ?? 0}`;
  }

  /** A prefix path that is a real folder becomes the first release (docs/releases.md "The switch"). */
  private async adopt(p: PrefixPaths, by: string): Promise<void> {
    await fs.mkdir(p.home, { recursive: true });
    const st = await fs.lstat(p.link).catch(() => null);
    if (!st || st.isSymbolicLink()) return;
    if (!st.isDirectory()) throw new ReleaseError(wwwrootProblems.RELEASE_NOT_A_FOLDER, `${p.prefix} is a file`);
    const id = newReleaseId(this.now());
    const { sums, hashed: _h, ...summary } = await treeSummary(p.link);
    const time = new Date(this.now()).toISOString();
    await this.writeSums(p, id, sums);
    await this.writeManifest(p, { id, prefix: p.prefix, time, by, ...summary, edits: [] });
    this.step('adopt-manifest');
    await fs.rename(p.link, releaseDir(p, id));
    this.step('adopted');
    await this.swapLink(p, id);
  }

  /**
   * Finishes a staged release and switches to it in one rename. The tree digest reads only the
   * files the stage does not share with the live release (docs/releases.md "Manifest and history").
   */
  async commit(prefix: string, id: string, timings: SwitchTimings = {}): Promise<ReleaseManifest> {
    const p = this.paths(prefix);
    checkReleaseId(id);
    return this.serial(p.key, async () => {
      const dir = stagingDir(p, id);
      if (!(await exists(dir)))
        throw new ReleaseError(wwwrootProblems.RELEASE_NOT_STAGED, `no release ${id} is being staged`);
      const base = await fs.readFile(path.join(p.home, `.${id}.base`), 'utf8').catch(() => null);
      if (base !== (await this.baseOf(p, await liveId(p)))) {
        throw new ReleaseError(
          wwwrootProblems.RELEASE_LIVE_MOVED,
          `the live release of ${p.prefix} changed since ${id} was staged (another push, a rollback or a one-file upload): stage it again`,
        );
      }
      const by = await fs.readFile(path.join(p.home, `.${id}.by`), 'utf8').catch(() => '');
      const started = process.hrtime.bigint();
      const live = await liveId(p);
      const known = [live ? await this.readSums(p, live) : undefined, this.staged.get(dir)];
      const { sums, hashed, ...summary } = await treeSummary(
        dir,
        known.filter((k) => k !== undefined),
      ).catch((err: unknown) => {
        if (!(err instanceof TreeChangedError)) throw err;
        throw new ReleaseError(
          wwwrootProblems.RELEASE_STAGE_CHANGED,
          `a file of ${id} went away while it was committed: commit again once every batch into it has ended`,
        );
      });
      timings.read = hashed;
      this.staged.delete(dir);
      timings.digest = since(started);
      this.step('staged');
      await fs.rename(dir, releaseDir(p, id));
      await fs.rm(path.join(p.home, `.${id}.by`), { force: true });
      await fs.rm(path.join(p.home, `.${id}.base`), { force: true });
      this.step('renamed');
      await this.writeSums(p, id, sums);
      const manifest: ReleaseManifest = {
        id,
        prefix: p.prefix,
        time: new Date(this.now()).toISOString(),
        by,
        ...summary,
        edits: [],
      };
      return this.switchTo(p, manifest, timings);
    });
  }

  private async switchTo(p: PrefixPaths, manifest: ReleaseManifest, timings: SwitchTimings): Promise<ReleaseManifest> {
    const previous = await liveId(p);
    const next = { ...manifest, previous: previous ?? undefined, switchedAt: new Date(this.now()).toISOString() };
    if (previous === manifest.id) return manifest;
    let t = process.hrtime.bigint();
    await this.writeManifest(p, next);
    this.step('manifest');
    await this.swapLink(p, manifest.id);
    timings.switch = since(t);
    t = process.hrtime.bigint();
    timings.pruned = await this.prune(p);
    timings.prune = since(t);
    return next;
  }

  private async swapLink(p: PrefixPaths, id: string): Promise<void> {
    await fs.rm(p.tempLink, { force: true });
    await fs.mkdir(path.dirname(p.link), { recursive: true });
    await fs.symlink(path.relative(path.dirname(p.link), releaseDir(p, id)), p.tempLink);
    this.step('temp-link');
    await fs.rename(p.tempLink, p.link);
    this.step('switched');
  }

  private async writeManifest(p: PrefixPaths, m: ReleaseManifest): Promise<void> {
    await writeFileAtomic(manifestPath(p, m.id), `${JSON.stringify(m, null, 2)}\n`);
  }

  /** The release's files' digests: a cache, so never flushed; a release without them is read whole. */
  private async writeSums(p: PrefixPaths, id: string, sums: TreeSums): Promise<void> {
    const file = sumsPath(p, id);
    await fs.writeFile(`${file}.tmp`, formatSums(sums));
    await fs.rename(`${file}.tmp`, file);
    const st = await fs.stat(file, { bigint: true }).catch(() => null);
    if (st) this.remember(file, factsKey(st), sums);
  }

  /**
   * A release's digests, from memory while its file is the one read (a switch's diff and the next
   * commit then cost no parse), else read; undefined when there are none.
   */
  /** The digests kept beside release `id` of `prefix` (undefined when none are kept). */
  async sumsOf(prefix: string, id: string): Promise<TreeSums | undefined> {
    return this.readSums(this.paths(prefix), checkReleaseId(id));
  }

  private async readSums(p: PrefixPaths, id: string): Promise<TreeSums | undefined> {
    const file = sumsPath(p, id);
    const st = await fs.stat(file, { bigint: true }).catch(() => null);
    if (!st) return undefined;
    const hit = this.sums.get(file);
    if (hit?.key === factsKey(st)) return hit.sums;
    const parsed = parseSums(await fs.readFile(file, 'utf8').catch(() => ''));
    if (parsed) this.remember(file, factsKey(st), parsed);
    return parsed;
  }

  private remember(file: string, key: string, sums: TreeSums): void {
    this.sums.delete(file);
    this.sums.set(file, { key, sums });
    if (this.sums.size > SUMS_KEPT) this.sums.delete(this.sums.keys().next().value!);
  }

  /**
   * The files a switch changed (docs/releases.md "Refresh and live reload"): from the two releases'
   * digests (inode and size as committed) when both have them, else by a walk of both trees.
   */
  async switchedFiles(prefix: string, from: string | undefined, to: string): Promise<string[]> {
    const p = this.paths(prefix);
    const [before, after] = await Promise.all([from ? this.readSums(p, from) : new Map(), this.readSums(p, to)]);
    if (before && after) return changedSums(before, after);
    return changedFiles(from ? releaseDir(p, from) : null, releaseDir(p, to));
  }

  private async readManifest(p: PrefixPaths, id: string): Promise<ReleaseManifest | null> {
    try {
      return JSON.parse(await fs.readFile(manifestPath(p, id), 'utf8')) as ReleaseManifest;
    } catch {
      return null;
    }
  }

  /**
   * Takes note of files just written into a stage with the digest of what was written (the
   * upload flow hashes as it writes), under the facts they have now: the commit then reads them
   * only if they changed since (docs/releases.md "Manifest and history"). A file whose size is not
   * what was written (replaced meanwhile) is not noted.
   */
  noteStaged(prefix: string, id: string, written: ReadonlyArray<{ absolute: string; sha256: string; bytes: number }>) {
    const dir = stagingDir(this.paths(prefix), checkReleaseId(id));
    let sums = this.staged.get(dir);
    if (!sums) {
      this.staged.set(dir, (sums = new Map()));
      // A stage never committed nor discarded (its client gone) is forgotten past a few.
      if (this.staged.size > STAGES_NOTED) this.staged.delete(this.staged.keys().next().value!);
    }
    for (const w of written) {
      const rel = path.relative(dir, w.absolute);
      if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const st = fsSync.statSync(w.absolute, { bigint: true, throwIfNoEntry: false });
      if (!st?.isFile() || st.size !== BigInt(w.bytes)) continue;
      sums.set(rel.split(path.sep).join('/'), { sha256: w.sha256, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs });
    }
  }

  /** Throws away a staged release. */
  async discard(prefix: string, id: string): Promise<boolean> {
    const p = this.paths(prefix);
    checkReleaseId(id);
    const dir = stagingDir(p, id);
    this.staged.delete(dir);
    const had = await exists(dir);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(path.join(p.home, `.${id}.by`), { force: true });
    await fs.rm(path.join(p.home, `.${id}.base`), { force: true });
    return had;
  }

  /** Releases of a prefix, newest first. */
  async list(prefix: string): Promise<ReleaseInfo[]> {
    return this.listOf(this.paths(prefix));
  }

  private async listOf(p: PrefixPaths): Promise<ReleaseInfo[]> {
    const live = await liveId(p);
    const names = await fs.readdir(p.home).catch(() => [] as string[]);
    const out: ReleaseInfo[] = [];
    for (const n of names) {
      if (!n.endsWith('.json') || n.startsWith('.')) continue;
      const m = await this.readManifest(p, n.slice(0, -5));
      if (!m || !(await exists(releaseDir(p, m.id)))) continue;
      const { previous: _p, switchedAt: _s, ...info } = m;
      out.push({ ...info, live: m.id === live });
    }
    return out.sort((a, b) => (a.time === b.time ? b.id.localeCompare(a.id) : b.time.localeCompare(a.time)));
  }

  /** Switches back to `to`, else to the newest release older than the live one. */
  async rollback(prefix: string, to?: string, timings: SwitchTimings = {}): Promise<ReleaseManifest> {
    const p = this.paths(prefix);
    if (to !== undefined) checkReleaseId(to);
    return this.serial(p.key, async () => {
      const all = await this.listOf(p);
      const liveAt = all.findIndex((r) => r.live);
      const target = to !== undefined ? all.find((r) => r.id === to) : all[liveAt + 1];
      if (!target) {
        throw new ReleaseError(
          wwwrootProblems.RELEASE_NOT_FOUND,
          to !== undefined ? `no release ${to} of ${p.prefix}` : `${p.prefix} has no release before the live one`,
        );
      }
      const m = await this.readManifest(p, target.id);
      return this.switchTo(p, m!, timings);
    });
  }

  /**
   * Removes releases beyond `keep`, never the live one nor the previous one within its grace.
   * Returns how many it removed.
   */
  private async prune(p: PrefixPaths): Promise<number> {
    const all = await this.listOf(p);
    const live = all.find((r) => r.live);
    const protect = new Set<string>();
    if (live) {
      protect.add(live.id);
      const m = await this.readManifest(p, live.id);
      if (m?.previous && m.switchedAt && this.now() - Date.parse(m.switchedAt) < this.graceMs) protect.add(m.previous);
    }
    const kept = all.filter((r, i) => protect.has(r.id) || i < this.keep);
    // Over `keep` with protected ones: drop the oldest unprotected first.
    while (kept.length > Math.max(this.keep, protect.size)) {
      const idx = kept.map((r) => protect.has(r.id)).lastIndexOf(false);
      if (idx < 0) break;
      kept.splice(idx, 1);
    }
    const keepIds = new Set(kept.map((r) => r.id));
    let removed = 0;
    for (const r of all) {
      if (keepIds.has(r.id)) continue;
      // The manifest goes first: a folder without one is debris that recover removes.
      await fs.rm(manifestPath(p, r.id), { force: true });
      await fs.rm(sumsPath(p, r.id), { force: true });
      await fs.rm(releaseDir(p, r.id), { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /** The file to serve from the previous release for a path the live one removed, within grace. */
  async graceLookup(prefix: string, relPath: string): Promise<string | null> {
    const p = this.paths(prefix);
    const live = await liveId(p);
    if (!live) return null;
    const m = await this.readManifest(p, live);
    if (!m?.previous || !m.switchedAt || this.now() - Date.parse(m.switchedAt) >= this.graceMs) return null;
    const rel = relPath.split('/').filter((s) => s !== '');
    if (rel.some((s) => s === '..' || s.startsWith('.'))) return null;
    if (await exists(path.join(releaseDir(p, live), ...rel))) return null;
    const old = path.join(releaseDir(p, m.previous), ...rel);
    const st = await fs.stat(old).catch(() => null);
    return st?.isFile() ? old : null;
  }

  /** The one-file form changed the live release: its manifest says so (docs/releases.md). */
  async noteOneFileChange(prefix: string, filePath: string, change: string): Promise<void> {
    const p = this.paths(prefix);
    await this.serial(p.key, async () => {
      const live = await liveId(p);
      const m = live ? await this.readManifest(p, live) : null;
      if (!m) return;
      const { sums, hashed: _h, ...summary } = await treeSummary(releaseDir(p, m.id), await this.readSums(p, m.id));
      await this.writeSums(p, m.id, sums);
      m.edits.push({ time: new Date(this.now()).toISOString(), path: filePath, change });
      await this.writeManifest(p, { ...m, ...summary });
    });
  }

  /** Run at start, before serving: one whole live release per prefix, no debris. */
  async recover(): Promise<void> {
    for (const prefix of await this.prefixes()) {
      const p = this.paths(prefix);
      await fs.rm(p.tempLink, { force: true });
      for (const n of await fs.readdir(p.home)) {
        if (n === LOCK_FILE) continue;
        const full = path.join(p.home, n);
        if (
          n.endsWith('.staging') ||
          isTemporaryFileName(n) ||
          (n.startsWith('.') && (n.endsWith('.by') || n.endsWith('.base')))
        ) {
          await fs.rm(full, { recursive: true, force: true });
        }
      }
      let live = await liveId(p);
      if (live && !(await exists(releaseDir(p, live)))) live = null;
      const names = await fs.readdir(p.home);
      for (const n of names) {
        if (n === LOCK_FILE) continue;
        const full = path.join(p.home, n);
        if (n.endsWith('.json')) {
          if (!(await exists(full.slice(0, -5)))) await fs.rm(full, { force: true });
        } else if (n.endsWith('.sums') || n.endsWith('.sums.tmp')) {
          // A release's digests stay with it (kept when it is), a half-written one goes.
          const id = n.slice(0, n.lastIndexOf('.sums'));
          const kept = names.includes(id) && (id === live || names.includes(`${id}.json`));
          if (n.endsWith('.tmp') || !kept) await fs.rm(full, { force: true });
        } else if (n !== live && !names.includes(`${n}.json`)) {
          await fs.rm(full, { recursive: true, force: true });
        }
      }
      if (!live) {
        const newest = (await this.listOf(p))[0];
        if (newest && !(await fs.lstat(p.link).catch(() => null))?.isDirectory()) await this.swapLink(p, newest.id);
      }
      if ((await fs.readdir(p.home)).filter((n) => n !== LOCK_FILE).length === 0)
        await fs.rm(p.home, { recursive: true }).catch(() => undefined);
    }
  }
}

async function exists(file: string): Promise<boolean> {
  return fs
    .lstat(file)
    .then(() => true)
    .catch(() => false);
}

export { ReleaseError } from './layout.js';
