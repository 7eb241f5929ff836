// Why this file is long: the three upload forms (one file in a form, a batch, the file as the
// whole body) share one flow of plan, stage, commit and answer (docs/sync.md); keeping them beside
// that flow keeps the one safe-write and upload path in one place.
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import type { Request, Response } from 'express';
import { ProblemError } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { fileSystemProblem } from '../http/file-system-problem.js';
import { ClientGoneError, receiveUpload, type FormFieldValues, type FormFields } from './receive-upload.js';
import { flushStaged } from '../fs/batch-staging.js';
import { receiveBody } from './receive-body.js';
import {
  commitStaged,
  commitStagedSync,
  isTemporaryFileName,
  discardStaged,
  moveStaged,
  removeFilesTogether,
  stageCopy,
  syncFolders,
  type StagedFile,
} from '../fs/safe-write.js';
import { sweepTemporaryFiles } from '../fs/sweep.js';

/**
 * The one upload flow (docs/sync.md "The upload flow"), used by sync upload and contract sync:
 * read the multipart form, resolve its targets once, stage the file beside the first target,
 * copy it beside the others, then commit all targets together (or delete them together) under
 * the per-target lock, and answer. Whatever fails, every staged file is removed before the answer;
 * a client that went away gets no answer. At start the flow sweeps what a dead process left; at
 * stop it aborts the uploads in flight and removes their staged files.
 */

export type UploadChange = 'Created' | 'Changed' | 'Deleted';

/** What a form asks for, as the caller resolved it from the fields. */
export interface UploadPlan<R> {
  change: UploadChange;
  /** Absolute paths of the files written (or deleted) together: all or none. */
  targets: string[];
  /** The caller's own view of the request (module, relative path, ...), handed back in the outcome. */
  request: R;
}

export interface UploadOutcome<R> extends UploadPlan<R> {
  /** Per target, whether a file was there before. */
  existed: boolean[];
  /** Bytes written (0 for a delete). */
  bytes: number;
  /** SHA-256 of the written file (null for a delete). */
  sha256: string | null;
}

export interface UploadHandling<R> {
  /** Names (lower case) of the fields that name the targets; once all arrived, `resolve` runs. */
  targetFields: readonly string[];
  /** Validates the fields and resolves the targets (throw a `ProblemError` to refuse). Runs once. */
  resolve(fields: FormFields): Promise<UploadPlan<R>>;
  /** Answers the client once the change is done. */
  answer(outcome: UploadOutcome<R>): Promise<void> | void;
}

/** One entry of a batch as the caller resolved it: its target, or why it alone is refused. */
export interface BatchEntryPlan<R> {
  /** The caller's view of the entry (module, relative path, ...), handed back in its outcome. */
  request: R;
  /** Absolute path of the file written or deleted; absent when refused. */
  target?: string;
  refused?: ProblemError;
}

export type BatchEntryOutcome<R> =
  | { request: R; change: UploadChange; ok: true; existed: boolean; bytes: number; sha256: string | null }
  | { request: R; change: UploadChange; ok: false; problem: ProblemError };

export interface BatchHandling<R> {
  /** Most files in one request (the per-request file limit). */
  maxFiles: number;
  /** Resolves file `index` from the fields sent before it (throw a `ProblemError` to refuse the whole batch). */
  resolveFile(fields: FormFieldValues, index: number): Promise<BatchEntryPlan<R>>;
  /**
   * Once the form is read and before anything is committed: checks the form as a whole (throw to
   * refuse it all) and resolves the deletions it asks for.
   */
  resolveDeletes(fields: FormFieldValues, fileCount: number): Promise<Array<BatchEntryPlan<R>>>;
  /** Answers with one outcome per entry: files in the order sent, then deletions. */
  answer(outcomes: Array<BatchEntryOutcome<R>>): Promise<void> | void;
}

/** An upload whose body is the file (docs/sync.md "One big file"): the targets come with the request's head. */
export interface BodyUploadHandling<R> {
  /** Validates the request's head and resolves the targets before the body is read (throw a `ProblemError` to refuse). */
  resolve(): Promise<UploadPlan<R>>;
  /** Answers the client once the file is stored. */
  answer(outcome: UploadOutcome<R>): Promise<void> | void;
}

export interface UploadFlowOptions {
  /** Prefix of problem codes: `sync` gives `sync.missing_file`, `sync.file_too_large`, ... */
  codePrefix: string;
  /** Most bytes of the file (`Security:MaxContractSyncFileBytes`). */
  maxFileBytes: number;
  /** Most bytes of the whole body (`Kestrel:Limits:MaxRequestBodySize`); null for none. */
  maxBodyBytes: number | null;
  /** Where a file that arrives before its fields waits; swept at start like the target folders. */
  stagingDir: string;
  /** Detail of the 400 `<prefix>.not_a_file` when a target is a folder. */
  notAFileDetail: string;
}

const missingFile = (codePrefix: string) =>
  new ProblemError({
    status: 400,
    code: hostProblems.PREFIX_MISSING_FILE.code(codePrefix),
    detail: 'The file part is missing.',
  });

/** Synchronous commits of a batch run this long at most before other requests get a turn. */
const COMMIT_SLICE_MS = 4;

/** Answer to uploads in flight (and new ones) once the host is stopping. */
const STOPPING = () =>
  new ProblemError({
    status: 503,
    code: hostProblems.HOST_STOPPING.code,
    detail: 'The host is stopping; send the upload again.',
    headers: { 'Retry-After': '1' },
  });

/**
 * A target named like a leftover temporary file would be deleted by the next start-up sweep:
 * refused, so that nothing synced is lost later (docs/sync.md).
 */
function refuseTemporaryNames<R>(plan: UploadPlan<R>, codePrefix: string): UploadPlan<R> {
  if (plan.targets.some((target) => isTemporaryFileName(path.basename(target))))
    throw new ProblemError({
      status: 400,
      code: hostProblems.PREFIX_INVALID_PATH.code(codePrefix),
      detail: 'The file name has the form of a temporary upload file (".*.ack-tmp"), which the host removes.',
    });
  return plan;
}

export class UploadFlow {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stop = new AbortController();

  constructor(private readonly options: UploadFlowOptions) {
    // One abort listener per upload in flight, removed when it ends: many at once are normal (a
    // client may hold up to MaxConnectionsPerClient), not a leak to warn about.
    setMaxListeners(0, this.stop.signal);
  }

  /** Uploads that have not ended yet (read, staged or being committed); 0 once every request has ended. */
  get uploadsInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * At start: removes temporary files a process that died mid-upload left under `roots` and in the
   * staging folder (only stale ones: another host may share the folders). Returns how many went.
   */
  async sweep(roots: readonly string[]): Promise<number> {
    let removed = 0;
    for (const root of [...roots, this.options.stagingDir])
      removed += (await sweepTemporaryFiles(root).catch(() => [])).length;
    return removed;
  }

  /** Runs one upload request to its answer; errors go to `next` (the host's problem responder). */
  handle<R>(req: Request, res: Response, next: (err?: unknown) => void, handling: UploadHandling<R>): Promise<void> {
    return this.track(this.run(req, res, handling), res, next);
  }

  /**
   * Runs a batch request (docs/sync.md "Batch upload"): several files in one form, each staged beside
   * its own target and committed on its own (atomically, under its lock) once the whole form is
   * read, then the deletions. A form that cannot be read commits nothing; a file refused alone
   * (its path, its size) gets its own outcome and the others land.
   */
  handleBatch<R>(
    req: Request,
    res: Response,
    next: (err?: unknown) => void,
    handling: BatchHandling<R>,
  ): Promise<void> {
    return this.track(this.runBatch(req, res, handling), res, next);
  }

  /**
   * Runs an upload whose body is the file itself (docs/sync.md "One big file"): the targets are
   * resolved from the request's head first, then the body is staged beside the first target,
   * copied beside the others, and all are committed together, as `handle` does for a form.
   */
  handleBody<R>(
    req: Request,
    res: Response,
    next: (err?: unknown) => void,
    handling: BodyUploadHandling<R>,
  ): Promise<void> {
    return this.track(this.runBody(req, res, handling), res, next);
  }

  /** An upload in flight until it ends: its failure goes to `next`, a client gone gets nothing. */
  private track(work: Promise<void>, res: Response, next: (err?: unknown) => void): Promise<void> {
    const run = work.catch((err: unknown) => {
      if (err instanceof ClientGoneError) return void res.destroy();
      next(err);
    });
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }

  /**
   * At stop: refuses new uploads, aborts those in flight and waits until their staged files are
   * gone, at most `limitMs` (a stuck file system must not hold the stop for ever; the start-up
   * sweep removes what is left).
   */
  async close(limitMs = 5000): Promise<void> {
    if (!this.stop.signal.aborted) this.stop.abort(STOPPING());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.inFlight]),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs).unref())),
    ]);
    clearTimeout(timer);
  }

  private async runBatch<R>(req: Request, res: Response, handling: BatchHandling<R>): Promise<void> {
    const { codePrefix } = this.options;
    if (this.stop.signal.aborted) throw this.stop.signal.reason;
    const plans = new Map<number, Promise<BatchEntryPlan<R>>>();
    const checked = async (plan: BatchEntryPlan<R>): Promise<BatchEntryPlan<R>> => {
      if (plan.refused || !plan.target) return plan;
      try {
        refuseTemporaryNames({ change: 'Changed', targets: [plan.target], request: plan.request }, codePrefix);
        return plan;
      } catch (err) {
        return { request: plan.request, refused: err as ProblemError };
      }
    };
    const form = await receiveUpload(req, res, {
      maxBytes: this.options.maxFileBytes,
      maxBodyBytes: this.options.maxBodyBytes,
      codePrefix,
      stagingDir: this.options.stagingDir,
      signal: this.stop.signal,
      stageDir: () => undefined,
      batch: {
        maxFiles: handling.maxFiles,
        async stageFile(fields, index) {
          const plan = handling.resolveFile(fields, index).then(checked);
          plans.set(index, plan);
          const { target, refused } = await plan;
          return refused || !target ? { refused: refused! } : { dir: path.dirname(target) };
        },
      },
    });
    const entries = form.files ?? [];
    const pending = entries.map((e) => e.file);
    const outcomes: Array<BatchEntryOutcome<R>> = [];
    // An entry's file-system failure is that entry's outcome, as the host would answer it alone.
    const perEntry = (err: unknown): ProblemError => {
      const folder = this.notAFile(err);
      if (folder instanceof ProblemError) return folder;
      const problem = fileSystemProblem(err);
      if (problem) return new ProblemError(problem);
      throw err;
    };
    // Every commit's folder is flushed once, after the last commit, before the answer.
    const committedDirs: string[] = [];
    const madeFolders = new Set<string>();
    let sliceFrom = performance.now();
    try {
      // The files were staged without a flush each: all are made durable before any is committed.
      await flushStaged(pending);
      const deletes = await Promise.all(
        (await handling.resolveDeletes(form.values ?? new Map(), entries.length)).map(checked),
      );
      for (const entry of entries) {
        const plan = await plans.get(entry.index)!;
        const refused = plan.refused ?? entry.refused;
        if (refused || !entry.file || !plan.target) {
          await discardStaged(entry.file);
          pending[entry.index] = undefined;
          outcomes.push({
            request: plan.request,
            change: 'Changed',
            ok: false,
            problem: refused ?? missingFile(codePrefix),
          });
          continue;
        }
        try {
          // Staged elsewhere when its folder did not exist yet: the folder is made now, in the
          // order sent, so that an earlier entry's file is never taken for a later one's folder.
          // Synchronous calls a slice at a time where they can (`commitStagedSync`).
          let existed = commitStagedSync(entry.file, plan.target, madeFolders);
          if (existed === undefined) {
            const staged = await moveStaged(entry.file, path.dirname(plan.target));
            pending[entry.index] = undefined; // consumed by the commit either way
            [existed] = await commitStaged([{ staged, target: plan.target }], { syncFolders: false });
          }
          pending[entry.index] = undefined;
          committedDirs.push(path.dirname(plan.target));
          if (performance.now() - sliceFrom > COMMIT_SLICE_MS) {
            await new Promise(setImmediate);
            sliceFrom = performance.now();
          }
          outcomes.push({
            request: plan.request,
            change: existed ? 'Changed' : 'Created',
            ok: true,
            existed: existed!,
            bytes: entry.file.bytes,
            sha256: entry.file.sha256,
          });
        } catch (err) {
          await discardStaged(pending[entry.index]);
          pending[entry.index] = undefined;
          outcomes.push({ request: plan.request, change: 'Changed', ok: false, problem: perEntry(err) });
        }
      }
      for (const plan of deletes) {
        if (plan.refused || !plan.target) {
          outcomes.push({ request: plan.request, change: 'Deleted', ok: false, problem: plan.refused! });
          continue;
        }
        try {
          const [existed] = await removeFilesTogether([plan.target]);
          outcomes.push({
            request: plan.request,
            change: 'Deleted',
            ok: true,
            existed: existed!,
            bytes: 0,
            sha256: null,
          });
        } catch (err) {
          outcomes.push({ request: plan.request, change: 'Deleted', ok: false, problem: perEntry(err) });
        }
      }
      await syncFolders(committedDirs);
    } catch (err) {
      await discardStaged(...pending);
      throw err;
    }
    await handling.answer(outcomes);
  }

  private async run<R>(req: Request, res: Response, handling: UploadHandling<R>): Promise<void> {
    const { codePrefix } = this.options;
    if (this.stop.signal.aborted) throw this.stop.signal.reason;
    let plan: Promise<UploadPlan<R>> | undefined;
    const resolveOnce = (fields: FormFields) =>
      (plan ??= handling.resolve(fields).then((p) => refuseTemporaryNames(p, codePrefix)));
    const staged: StagedFile[] = [];
    try {
      const form = await receiveUpload(req, res, {
        maxBytes: this.options.maxFileBytes,
        maxBodyBytes: this.options.maxBodyBytes,
        codePrefix,
        stagingDir: this.options.stagingDir,
        signal: this.stop.signal,
        async stageDir(fields) {
          if (!handling.targetFields.every((name) => fields.has(name))) return undefined;
          const { change, targets } = await resolveOnce(fields);
          return change === 'Deleted' ? undefined : path.dirname(targets[0]!);
        },
      });
      if (form.file) staged.push(form.file);
      const plan = await resolveOnce(form.fields);
      const { change, targets, request } = plan;
      if (change === 'Deleted') {
        await discardStaged(...staged.splice(0));
        const existed = await removeFilesTogether(targets).catch((err: unknown) => {
          throw this.notAFile(err);
        });
        return await handling.answer({ change, targets, request, existed, bytes: 0, sha256: null });
      }
      const file = staged.pop();
      if (!file)
        throw new ProblemError({
          status: 400,
          code: hostProblems.PREFIX_MISSING_FILE.code(codePrefix),
          detail: 'The file field is required unless changeType is Deleted.',
        });
      staged.push(file); // until moved, so that a failed move still discards it
      const first = await moveStaged(file, path.dirname(targets[0]!));
      staged.splice(0, staged.length, first);
      await this.commitAndAnswer(first, staged, plan, (outcome) => handling.answer(outcome));
    } catch (err) {
      await discardStaged(...staged);
      throw err;
    }
  }

  /** A commit or delete that met a folder where a file goes, as the problem it is answered with. */
  private notAFile(err: unknown): unknown {
    if ((err as NodeJS.ErrnoException).code !== 'EISDIR') return err;
    return new ProblemError({
      status: 400,
      code: hostProblems.PREFIX_NOT_A_FILE.code(this.options.codePrefix),
      detail: this.options.notAFileDetail,
    });
  }

  /**
   * Copies the staged `first` (already in `staged`, which holds what a failure must discard) beside
   * every further target, commits all targets together and answers.
   */
  private async commitAndAnswer<R>(
    first: StagedFile,
    staged: StagedFile[],
    plan: UploadPlan<R>,
    answer: (outcome: UploadOutcome<R>) => Promise<void> | void,
  ): Promise<void> {
    const { targets } = plan;
    for (const target of targets.slice(1)) staged.push(await stageCopy(path.dirname(target), first));
    const existed = await commitStaged(targets.map((target, i) => ({ staged: staged[i]!, target }))).catch(
      (err: unknown) => {
        staged.length = 0; // consumed by the commit either way
        throw this.notAFile(err);
      },
    );
    staged.length = 0;
    await answer({ ...plan, existed, bytes: first.bytes, sha256: first.sha256 });
  }

  private async runBody<R>(req: Request, res: Response, handling: BodyUploadHandling<R>): Promise<void> {
    const { codePrefix } = this.options;
    const staged: StagedFile[] = [];
    try {
      if (this.stop.signal.aborted) throw this.stop.signal.reason;
      const plan = refuseTemporaryNames(await handling.resolve(), codePrefix);
      const { targets } = plan;
      const first = await receiveBody(req, res, {
        dir: path.dirname(targets[0]!),
        nameHint: targets[0]!,
        maxBytes: this.options.maxFileBytes,
        maxBodyBytes: this.options.maxBodyBytes,
        codePrefix,
        signal: this.stop.signal,
      });
      staged.push(first);
      await this.commitAndAnswer(first, staged, plan, (outcome) => handling.answer(outcome));
    } catch (err) {
      // Refused before the body was read (the head, the stop): the connection guard closes the
      // connection after the answer.
      await discardStaged(...staged);
      throw err;
    }
  }
}
