import express, { type Router } from 'express';
import { sendProblem, type Logger, type ChangeType, type UploadFlow } from '@ack/host';
import { countOutcomes, parseChangeType, CONTRACT_TYPES, type UploadOutcome } from '@ack/host/serving';
import type { WwwrootRuntime } from '../runtime.js';
import { wwwrootProblems } from '../problem-codes.js';
import { verifySyncToken, type TokenVerdict } from './basic-token.js';
import { contractFolderOf } from './module-folders.js';
import { publicOutcome, refreshModule } from './refresh.js';
import { bad, parseModuleName, queryOf, resolveModulePath } from './targets.js';
import { createBatchHandler } from './batch.js';
import { removeEmptyParents } from './empty-folders.js';
import { createDigestCache } from './digest-cache.js';
import { createListHandler } from './listing-http.js';
import { createReleaseRouter } from '../releases/http.js';

/** The 401's code for each way the token check fails. */
const TOKEN_PROBLEMS: Record<Exclude<TokenVerdict, 'ok'>, { code: string }> = {
  missing_token: wwwrootProblems.SYNC_MISSING_TOKEN,
  malformed_token: wwwrootProblems.SYNC_MALFORMED_TOKEN,
  invalid_token: wwwrootProblems.SYNC_INVALID_TOKEN,
  no_tokens_configured: wwwrootProblems.SYNC_NO_TOKENS_CONFIGURED,
};

const TOKEN_DETAIL: Record<string, string> = {
  missing_token: 'An Authorization: Basic header with a sync token is required.',
  malformed_token: 'The Authorization header is not a Basic header with a token.',
  invalid_token: 'The sync token is not valid.',
  no_tokens_configured: 'File sync has no FileSyncTokens configured; every request is refused.',
};

interface SyncTarget {
  module: string;
  change: ChangeType;
  /** Relative to the module's contract folder, `/` separated, no leading `/`. */
  relative: string;
  absolute: string;
}

/** Validates `moduleName`, `changeType` and `filePath` (form fields or query) into a target file. */
async function resolveTarget(runtime: WwwrootRuntime, get: (name: string) => string | undefined): Promise<SyncTarget> {
  const module = parseModuleName(get('modulename'));
  const changeText = get('changetype');
  if (!changeText?.trim()) throw bad(wwwrootProblems.SYNC_MISSING_FIELD, 'The field changeType is required.');
  const change = parseChangeType(changeText);
  if (!change) throw bad(wwwrootProblems.SYNC_INVALID_CHANGE_TYPE, 'changeType must be Created, Changed or Deleted.');
  const filePath = get('filepath') ?? '';
  if (filePath.trim() === '') throw bad(wwwrootProblems.SYNC_MISSING_FIELD, 'The field filePath is required.');
  const { relative, absolute } = await resolveModulePath(runtime, module, filePath);
  return { module, change, relative, absolute };
}

const header = (req: express.Request, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * `/wwwroot/api/sync/*` (docs/sync.md): `POST upload` writes, replaces or deletes a contract
 * file atomically and refreshes the module (`PUT upload` writes one file sent as the whole body); `GET refresh` only refreshes. Both need a Basic token
 * listed in `FileSyncTokens`.
 */
export function createSyncRouter(runtime: WwwrootRuntime): Router {
  const router = express.Router();
  const logger = runtime.ctx.logger.child('sync');
  const flow = runtime.ctx.host.createUploadFlow({
    codePrefix: wwwrootProblems.SYNC.prefix,
    maxFileBytes: runtime.settings.host.maxFileBytes,
    notAFileDetail: 'filePath names a folder, not a file.',
  });
  void sweepContractFolders(runtime, flow, logger);
  // Uploads, batches, listings and refreshes on /metrics, by outcome (docs/operations.md "The host's own").
  const kinds = new Map([
    ['/upload', 'upload'],
    ['/batch', 'batch'],
    ['/list', 'listing'],
    ['/refresh', 'refresh'],
  ]);
  router.use(
    countOutcomes(
      runtime.ctx.host.counters,
      'ack_sync',
      'Sync requests',
      [...kinds.values()],
      (req) => kinds.get(req.path.toLowerCase()) ?? '',
    ),
  );

  // A wrong or malformed token counts against the client address; a missing one does not
  // (docs/pipeline.md "Failed token checks").
  router.use(
    runtime.ctx.host.accessChecks.guard((req) => {
      const verdict = verifySyncToken(header(req, 'authorization'), runtime.settings.fileSyncTokens);
      if (verdict === 'ok') return undefined;
      const counts = verdict === 'invalid_token' || verdict === 'malformed_token';
      if (!counts && verdict !== 'missing_token')
        logger.warn(`sync request refused (${verdict}) from ${req.ack.clientIp}`);
      return {
        counts,
        what: `sync ${verdict}`,
        problem: {
          status: 401,
          code: TOKEN_PROBLEMS[verdict].code,
          detail: TOKEN_DETAIL[verdict],
          headers: { 'WWW-Authenticate': 'Basic realm="ack-sync"' },
        },
      };
    }),
  );

  // The listing and the batch (docs/sync.md "The delta"): what a client needs to send only what differs.
  const digests = createDigestCache(runtime);
  router.get('/list', createListHandler(runtime, digests));
  router.post('/batch', createBatchHandler(runtime, flow, logger));
  // Releases of a prefix (docs/releases.md): a first slice, mounted only when asked for.
  if (runtime.settings.releasesEnabled) router.use('/releases', createReleaseRouter(runtime, flow, digests));

  /** The answer to an upload: what was stored, once the module has been refreshed. */
  const answerUpload =
    (req: express.Request, res: express.Response) =>
    async ({ request: target, existed, bytes, sha256 }: UploadOutcome<SyncTarget>) => {
      const stored = { bytes, sha256, existed: existed[0]! };
      if (target.change === 'Deleted')
        await removeEmptyParents(target.absolute, await contractFolderOf(runtime, target.module));
      const refresh = await refreshModule(
        runtime,
        { ...target, authorizationKey: header(req, 'authorizationkey') },
        runtime.settings.syncRefreshTimeoutMs,
      );
      logger.info(
        `${target.change} ${target.module}/${target.relative} (${stored.bytes} bytes); refresh ${refresh.ok ? 'ok' : `failed: ${refresh.detail}`}`,
      );
      res.json({
        module: target.module,
        path: target.relative,
        change: target.change,
        ...stored,
        refresh: publicOutcome(refresh),
      });
    };

  router.post('/upload', (req, res, next) => {
    void flow.handle(req, res, next, {
      targetFields: ['modulename', 'changetype', 'filepath'],
      async resolve(fields) {
        const target = await resolveTarget(runtime, (n) => fields.get(n));
        return { change: target.change, targets: [target.absolute], request: target };
      },
      answer: answerUpload(req, res),
    });
  });

  // One file as the whole body, the fields in the query (docs/wire-formats.md "Sync upload of one
  // file"): nothing to parse around the bytes, which is what makes a big file fast.
  router.put('/upload', (req, res, next) => {
    void flow.handleBody(req, res, next, {
      async resolve() {
        const byName = queryOf(req);
        const target = await resolveTarget(runtime, (n) => byName.get(n));
        if (target.change === 'Deleted')
          throw bad(
            wwwrootProblems.SYNC_INVALID_CHANGE_TYPE,
            'A PUT carries the file: changeType must be Created or Changed (a deletion is a POST without a file).',
          );
        return { change: target.change, targets: [target.absolute], request: target };
      },
      answer: answerUpload(req, res),
    });
  });

  router.get('/refresh', async (req, res, next) => {
    try {
      const byName = queryOf(req);
      const target = await resolveTarget(runtime, (n) => byName.get(n));
      const outcome = await refreshModule(
        runtime,
        { ...target, authorizationKey: header(req, 'authorizationkey') },
        runtime.settings.syncRefreshTimeoutMs,
      );
      if (!outcome.ok) {
        return sendProblem(
          res,
          {
            status: 502,
            code: outcome.code ?? wwwrootProblems.SYNC_REFRESH_FAILED.code,
            detail: outcome.detail,
            extensions: { module: target.module, upstreamStatus: outcome.status },
          },
          req.method,
        );
      }
      if (outcome.via === 'route') {
        // Relay the module's own answer.
        res.status(outcome.status ?? 200);
        if (outcome.contentType) res.setHeader('Content-Type', outcome.contentType);
        return void res.send(typeof outcome.body === 'string' ? outcome.body : JSON.stringify(outcome.body));
      }
      res.json({
        module: target.module,
        path: target.relative,
        change: target.change,
        refresh: publicOutcome(outcome),
      });
    } catch (err) {
      next(err);
    }
  });

  return router;
}

/** At start: remove temporary files a write left when a previous run died mid-upload. */
async function sweepContractFolders(runtime: WwwrootRuntime, flow: UploadFlow, logger: Logger): Promise<void> {
  const folders = new Set(await Promise.all(CONTRACT_TYPES.map((m) => contractFolderOf(runtime, m))));
  const removed = await flow.sweep([...folders]);
  if (removed > 0) logger.info(`removed ${removed} temporary file(s) left by an interrupted upload`);
}
