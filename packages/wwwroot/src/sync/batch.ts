import type { RequestHandler } from 'express';
import { ProblemError, type Logger, type UploadFlow } from '@ack/host';
import { batchFormLimits, type FormFieldValues, type RealFolders } from '@ack/host/serving';
import type { WwwrootRuntime } from '../runtime.js';
import { publicOutcome, refreshModule } from './refresh.js';
import { wwwrootProblems } from '../problem-codes.js';
import { bad, parseModuleName, queryOf, resolveInFolder, resolveModulePath } from './targets.js';
import { removeEmptyParents } from './empty-folders.js';
import { contractFolderOf } from './module-folders.js';
import { noteStagedWrites, stagedFolderOf } from '../releases/stage-target.js';

/** Most files in one batch request (docs/sync.md "Batches"); a client splits a longer push. */
export const BATCH_MAX_FILES = 1000;
/** Refreshes run at once for a batch (a module's refresh route is an HTTP call per file). */
const REFRESH_CONCURRENCY = 4;

/** What the listing's closing line announces of the batch route: its path and its limits. */
export function batchOffer(runtime: WwwrootRuntime) {
  return {
    path: '/wwwroot/api/sync/batch',
    maxFiles: BATCH_MAX_FILES,
    ...batchFormLimits(BATCH_MAX_FILES),
    maxFileBytes: runtime.settings.host.maxFileBytes,
    maxBodyBytes: runtime.settings.host.maxBodyBytes,
  };
}

interface BatchEntry {
  module: string;
  /** The path as resolved (or as sent, when refused). */
  path: string;
  absolute?: string;
}

/**
 * `POST /wwwroot/api/sync/batch` (docs/wire-formats.md "Sync batch"): `moduleName`, then for each file a
 * `filePath` field followed by its `file` part, and any number of `deletePath` fields. Each file is
 * committed on its own through the upload flow; the answer has one outcome per entry.
 */
export function createBatchHandler(runtime: WwwrootRuntime, flow: UploadFlow, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const authorizationKey = req.headers.authorizationkey;
    // The batch's files share a few folders: each is resolved (symlinks followed) once.
    const folders: RealFolders = new Map();
    const moduleOf = (fields: FormFieldValues) => parseModuleName(fields.get('modulename')?.[0]);
    // `?release=<id>&path=<prefix>`: the batch goes into that staged release, paths relative to the
    // prefix (docs/wire-formats.md "Sync releases"); checked once, before the first entry.
    let staged: Promise<string | undefined> | undefined;
    const stagedFolder = (module: string) => (staged ??= stagedFolderOf(runtime, module, queryOf(req)));
    const resolveEntry = async (module: string, filePath: string | undefined) => {
      const stage = await stagedFolder(module);
      if (!filePath?.trim())
        return {
          request: { module, path: '' },
          refused: bad(wwwrootProblems.SYNC_MISSING_FIELD, 'Each file needs its filePath.'),
        };
      try {
        const { relative, absolute } =
          stage === undefined
            ? await resolveModulePath(runtime, module, filePath, folders)
            : await resolveInFolder(stage, filePath, folders);
        return { request: { module, path: relative, absolute }, target: absolute };
      } catch (err) {
        if (err instanceof ProblemError) return { request: { module, path: filePath }, refused: err };
        throw err;
      }
    };
    void flow.handleBatch<BatchEntry>(req, res, next, {
      maxFiles: BATCH_MAX_FILES,
      async resolveFile(fields, index) {
        const module = moduleOf(fields);
        const paths = fields.get('filepath') ?? [];
        // Pairs are read by position: the n-th file belongs to the n-th filePath.
        if (paths.length !== index + 1)
          throw bad(wwwrootProblems.SYNC_INVALID_FORM, 'Each file part must come right after its own filePath field.');
        return resolveEntry(module, paths[index]);
      },
      async resolveDeletes(fields, fileCount) {
        const module = moduleOf(fields);
        if ((fields.get('filepath') ?? []).length !== fileCount)
          throw bad(wwwrootProblems.SYNC_INVALID_FORM, 'Each filePath field must be followed by its file part.');
        const deletes = fields.get('deletepath') ?? [];
        if (fileCount === 0 && deletes.length === 0)
          throw bad(wwwrootProblems.SYNC_MISSING_FIELD, 'A batch needs at least one file or deletePath.');
        return Promise.all(deletes.map((p) => resolveEntry(module, p)));
      },
      async answer(outcomes) {
        // Folders a deletion emptied go too, up to the contract folder (or the stage's own folder).
        for (const o of outcomes)
          if (o.ok && o.change === 'Deleted' && o.request.absolute)
            await removeEmptyParents(
              o.request.absolute,
              (await staged) ?? (await contractFolderOf(runtime, o.request.module)),
            );
        if ((await staged) !== undefined) {
          const written = outcomes.flatMap((o) =>
            o.ok && o.change !== 'Deleted' && o.request.absolute && o.sha256
              ? [{ absolute: o.request.absolute, sha256: o.sha256, bytes: o.bytes }]
              : [],
          );
          await noteStagedWrites(runtime, outcomes[0]!.request.module, queryOf(req), written);
        }
        const refreshes = await mapLimited(outcomes, REFRESH_CONCURRENCY, async (o) => {
          if (!o.ok || !o.request.absolute) return undefined;
          // A staged file is not live: the switch refreshes once (docs/releases.md).
          if ((await staged) !== undefined) return { ok: true, via: 'none' as const };
          return refreshModule(
            runtime,
            {
              module: o.request.module,
              change: o.change,
              relative: o.request.path,
              absolute: o.request.absolute,
              authorizationKey: typeof authorizationKey === 'string' ? authorizationKey : undefined,
            },
            runtime.settings.syncRefreshTimeoutMs,
          );
        });
        const results = outcomes.map((o, i) =>
          o.ok
            ? {
                path: o.request.path,
                change: o.change,
                ok: true,
                bytes: o.bytes,
                sha256: o.sha256,
                existed: o.existed,
                refresh: publicOutcome(refreshes[i]!),
              }
            : {
                path: o.request.path,
                change: o.change,
                ok: false,
                status: o.problem.problem.status,
                code: o.problem.problem.code,
                detail: o.problem.problem.detail,
              },
        );
        const written = outcomes.filter((o) => o.ok && o.change !== 'Deleted').length;
        const deleted = outcomes.filter((o) => o.ok && o.change === 'Deleted').length;
        const refused = outcomes.length - written - deleted;
        const module = outcomes[0]?.request.module ?? '';
        logger.info(`batch ${module}: ${written} written, ${deleted} deleted, ${refused} refused`);
        res.json({ module, results });
      },
    });
  };
}

async function mapLimited<T, U>(items: readonly T[], limit: number, fn: (item: T) => Promise<U>): Promise<U[]> {
  const out: U[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
