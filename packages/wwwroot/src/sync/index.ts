import path from 'node:path';
import express, { type Router } from 'express';
import {
  ClientGoneError,
  ProblemError,
  checkNoSymlinkEscape,
  commitStaged,
  discardStaged,
  parseChangeType,
  parseContractType,
  placeUpload,
  receiveUpload,
  removeFilesTogether,
  resolveContainedPath,
  sendProblem,
  sendThrottled,
  sweepTemporaryFiles,
  CONTRACT_TYPES,
  type Logger,
  type ChangeType,
  type StagedFile,
} from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { verifySyncToken } from './basic-token.js';
import { contractFolderOf } from './module-folders.js';
import { DEFAULT_REFRESH_TIMEOUT_MS, refreshModule, type RefreshOutcome } from './refresh.js';

const bad = (code: string, detail: string) => new ProblemError({ status: 400, code: `sync.${code}`, detail });

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
  const moduleText = get('modulename')?.trim();
  if (!moduleText) throw bad('missing_field', 'The field moduleName is required.');
  const module = parseContractType(moduleText);
  if (!module) throw bad('invalid_module', 'moduleName must be one of dbclient, graphclient, function, transact, command, prompter, repository, wwwroot.');
  const changeText = get('changetype');
  if (!changeText?.trim()) throw bad('missing_field', 'The field changeType is required.');
  const change = parseChangeType(changeText);
  if (!change) throw bad('invalid_change_type', 'changeType must be Created, Changed or Deleted.');
  const filePath = get('filepath') ?? '';
  if (filePath.trim() === '') throw bad('missing_field', 'The field filePath is required.');
  const folder = await contractFolderOf(runtime, module);
  const resolved = resolveContainedPath(folder, filePath);
  if (!resolved.ok) throw bad('invalid_path', `filePath is refused (${resolved.reason}): it must stay inside the module's contract folder.`);
  if (!(await checkNoSymlinkEscape(folder, resolved.absolute))) {
    throw bad('invalid_path', "filePath is refused (symlink-escape): it must stay inside the module's contract folder.");
  }
  return { module, change, relative: resolved.relative, absolute: resolved.absolute };
}

function refreshTimeoutMs(runtime: WwwrootRuntime): number {
  const configured = Number(runtime.settings.raw.SyncRefreshTimeoutMs);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_REFRESH_TIMEOUT_MS;
}

const header = (req: express.Request, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * `/wwwroot/api/sync/*` (spec 4.1, DESIGN §5): `POST upload` writes, replaces or deletes a contract
 * file atomically and refreshes the module; `GET refresh` only refreshes. Both need a Basic token
 * listed in `FileSyncTokens`.
 */
export function createSyncRouter(runtime: WwwrootRuntime): Router {
  const router = express.Router();
  const logger = runtime.ctx.logger.child('sync');
  void sweepContractFolders(runtime, logger);
  const maxBytes = runtime.ctx.settings.AppSettings.Security.MaxContractSyncFileBytes;

  const accessChecks = runtime.ctx.host.accessChecks;
  router.use((req, res, next) => {
    const clientIp = (req as unknown as { ack: { clientIp: string } }).ack.clientIp;
    const wait = accessChecks.retryAfter(clientIp);
    if (wait > 0) return sendThrottled(res, wait, req.method);
    const verdict = verifySyncToken(header(req, 'authorization'), runtime.settings.fileSyncTokens);
    if (verdict === 'ok') return next();
    // A wrong or malformed token counts towards the address's limit; its log lines are collapsed.
    if (verdict === 'invalid_token' || verdict === 'malformed_token') accessChecks.failed(clientIp, `sync ${verdict}`);
    else if (verdict !== 'missing_token') logger.warn(`sync request refused (${verdict}) from ${clientIp}`);
    sendProblem(res, { status: 401, code: `sync.${verdict}`, detail: TOKEN_DETAIL[verdict], headers: { 'WWW-Authenticate': 'Basic realm="ack-sync"' } }, req.method);
  });

  router.post('/upload', async (req, res, next) => {
    let file: StagedFile | undefined;
    try {
      const form = await receiveUpload(req, res, {
        maxBytes,
        codePrefix: 'sync',
        async stageDir(fields) {
          if (!fields.has('modulename') || !fields.has('changetype') || !fields.has('filepath')) return undefined;
          const target = await resolveTarget(runtime, (n) => fields.get(n));
          return target.change === 'Deleted' ? undefined : path.dirname(target.absolute);
        },
      });
      file = form.file;
      const target = await resolveTarget(runtime, (n) => form.fields.get(n));
      let stored: { bytes: number; sha256: string | null; existed: boolean };
      if (target.change === 'Deleted') {
        await discardStaged(file);
        file = undefined;
        const [existed] = await removeFilesTogether([target.absolute]).catch(folderRefused);
        stored = { bytes: 0, sha256: null, existed: existed! };
      } else {
        if (!file) throw bad('missing_file', 'The file field is required unless changeType is Deleted.');
        const placed = await placeUpload(file, path.dirname(target.absolute));
        file = undefined;
        const [existed] = await commitStaged([{ staged: placed, target: target.absolute }]).catch(folderRefused);
        stored = { bytes: placed.bytes, sha256: placed.sha256, existed: existed! };
      }
      const refresh = await refreshModule(runtime, { ...target, authorizationKey: header(req, 'authorizationkey') }, refreshTimeoutMs(runtime));
      logger.info(`${target.change} ${target.module}/${target.relative} (${stored.bytes} bytes); refresh ${refresh.ok ? 'ok' : `failed: ${refresh.detail}`}`);
      res.json({ module: target.module, path: target.relative, change: target.change, ...stored, refresh: publicOutcome(refresh) });
    } catch (err) {
      await discardStaged(file);
      if (err instanceof ClientGoneError) return void res.destroy();
      next(err);
    }
  });

  router.get('/refresh', async (req, res, next) => {
    try {
      const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
      const byName = new Map([...query].map(([k, v]) => [k.toLowerCase(), v] as const).reverse());
      const target = await resolveTarget(runtime, (n) => byName.get(n));
      const outcome = await refreshModule(runtime, { ...target, authorizationKey: header(req, 'authorizationkey') }, refreshTimeoutMs(runtime));
      if (!outcome.ok) {
        return sendProblem(res, { status: 502, code: outcome.code ?? 'sync.refresh_failed', detail: outcome.detail, extensions: { module: target.module, upstreamStatus: outcome.status } }, req.method);
      }
      if (outcome.via === 'route') {
        // Relay the module's own answer.
        res.status(outcome.status ?? 200);
        if (outcome.contentType) res.setHeader('Content-Type', outcome.contentType);
        return void res.send(typeof outcome.body === 'string' ? outcome.body : JSON.stringify(outcome.body));
      }
      res.json({ module: target.module, path: target.relative, change: target.change, refresh: publicOutcome(outcome) });
    } catch (err) {
      next(err);
    }
  });

  return router;
}

/** The refresh outcome as the upload answer shows it. */
function publicOutcome(outcome: RefreshOutcome): Record<string, unknown> {
  const { contentType: _contentType, ...rest } = outcome;
  return rest;
}

function folderRefused(err: unknown): never {
  if ((err as NodeJS.ErrnoException).code === 'EISDIR') throw bad('not_a_file', 'filePath names a folder, not a file.');
  throw err;
}

/** At start: remove temporary files a write left when a previous run died mid-upload. */
async function sweepContractFolders(runtime: WwwrootRuntime, logger: Logger): Promise<void> {
  const folders = new Set(await Promise.all(CONTRACT_TYPES.map((m) => contractFolderOf(runtime, m))));
  for (const folder of folders) {
    const removed = await sweepTemporaryFiles(folder).catch(() => []);
    if (removed.length > 0) logger.info(`removed ${removed.length} temporary file(s) left by an interrupted upload under ${folder}`);
  }
}
