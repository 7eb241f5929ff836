import path from 'node:path';
import express from 'express';
import type { ContractChangeEvent, HostServices, ModuleRoutes } from '../modules/contract.js';
import type { HostSettings } from '../settings/schema.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from '../logging/logger.js';
import { checkNoSymlinkEscape } from '../paths/contained-path.js';
import { ProblemError, sendProblem } from '../http/problem.js';
import { hostProblems, type ProblemCode } from '../http/problem-codes.js';
import type { FormFields } from '../uploads/receive-upload.js';
import type { UploadFlow } from '../uploads/upload-flow.js';
import { checkHostAccessID } from '../guards/host-access.js';
import { countOutcomes } from '../metrics/count-outcomes.js';
import fs from 'node:fs/promises';
import { contractSyncTargets, parseContractType, type ContractSyncTarget } from './targets.js';
import { parseChangeType } from '../modules/change-type.js';
import { isPlainModuleID } from '../modules/module-id.js';

const bad = (problem: ProblemCode & { status: 400 }, detail: string) =>
  new ProblemError({ status: problem.status, code: problem.code, detail });

/** The 401's code for each way the `hostAccessID` header fails. */
const ACCESS_ID_PROBLEMS = {
  missing: hostProblems.CONTRACTSYNC_MISSING_HOST_ACCESS_ID,
  invalid: hostProblems.CONTRACTSYNC_INVALID_HOST_ACCESS_ID,
  not_configured: hostProblems.CONTRACTSYNC_NOT_CONFIGURED,
};

interface ContractSyncRequest {
  moduleID: string;
  contractType: string;
  change: 'Created' | 'Changed' | 'Deleted';
  relative: string;
  targets: ContractSyncTarget[];
}

/** Validates the fields and works out the targets; every refusal is a 400 naming the field. */
async function resolveRequest(fields: FormFields, serviceHome: string): Promise<ContractSyncRequest> {
  const moduleID = fields.get('moduleid')?.trim() ?? '';
  if (moduleID === '') throw bad(hostProblems.CONTRACTSYNC_MISSING_FIELD, 'The field moduleID is required.');
  if (!isPlainModuleID(moduleID))
    throw bad(hostProblems.CONTRACTSYNC_INVALID_MODULE_ID, 'moduleID must be a plain name ([A-Za-z0-9_.-]+).');
  const contractType = parseContractType(fields.get('contracttype'));
  if (!fields.get('contracttype')?.trim())
    throw bad(hostProblems.CONTRACTSYNC_MISSING_FIELD, 'The field contractType is required.');
  if (!contractType)
    throw bad(
      hostProblems.CONTRACTSYNC_INVALID_CONTRACT_TYPE,
      'contractType must be one of dbclient, graphclient, function, transact, command, prompter, repository, wwwroot.',
    );
  const changeText = fields.get('changetype');
  if (!changeText?.trim()) throw bad(hostProblems.CONTRACTSYNC_MISSING_FIELD, 'The field changeType is required.');
  const change = parseChangeType(changeText);
  if (!change)
    throw bad(hostProblems.CONTRACTSYNC_INVALID_CHANGE_TYPE, 'changeType must be Created, Changed or Deleted.');
  const dest = fields.get('destfilepath') ?? '';
  if (dest.trim() === '') throw bad(hostProblems.CONTRACTSYNC_MISSING_FIELD, 'The field destFilePath is required.');
  const resolved = contractSyncTargets(serviceHome, moduleID, contractType, dest);
  if (!resolved.ok)
    throw bad(
      hostProblems.CONTRACTSYNC_INVALID_PATH,
      `destFilePath is refused (${resolved.reason}): it must stay inside the target folder.`,
    );
  for (const target of resolved.targets) {
    if (
      !(await checkNoSymlinkEscape(serviceHome, target.absolute)) ||
      !(await checkNoSymlinkEscape(target.root, target.absolute))
    ) {
      throw bad(
        hostProblems.CONTRACTSYNC_INVALID_PATH,
        'destFilePath is refused (symlink-escape): it must stay inside the target folder.',
      );
    }
  }
  return { moduleID, contractType, change, relative: resolved.relative, targets: resolved.targets };
}

/**
 * `POST /contractsync` (docs/sync.md): only when `UseContractSync` is true
 * (otherwise no route, so the path is an ordinary 404). Writes both targets or neither, then
 * publishes one contract change naming both (`services.contractChanges`).
 */
export function createContractSyncRoutes(
  settings: HostSettings,
  paths: HostPaths,
  services: HostServices,
  logger: Logger,
): ModuleRoutes[] {
  const app = settings.AppSettings;
  if (!app.UseContractSync) return [];
  const serviceHome = paths.serviceHome;
  const router = express.Router();
  // Contract syncs on /metrics, by outcome (docs/operations.md "The host's own").
  router.use(
    countOutcomes(services.counters, 'ack_contract_sync', 'Contract syncs', ['contractsync'], () => 'contractsync'),
  );
  const flow = services.createUploadFlow({
    codePrefix: hostProblems.CONTRACTSYNC.prefix,
    maxFileBytes: app.Security.MaxContractSyncFileBytes,
    notAFileDetail: 'The destination is a folder, not a file.',
  });
  void sweepTargets(flow, serviceHome, logger);
  if (checkHostAccessID(app.HostAccessID, undefined) === 'not_configured') {
    logger.warn(
      'UseContractSync is on but AppSettings:HostAccessID is empty or the shipped placeholder: every contract sync request will be refused',
    );
  }

  // A wrong hostAccessID counts against the client address (docs/pipeline.md "Failed token checks").
  const checkAccess = services.accessChecks.guard((req) => {
    const verdict = checkHostAccessID(app.HostAccessID, req.headers.hostaccessid);
    if (verdict === 'ok') return undefined;
    const detail = {
      missing: 'The hostAccessID header is required.',
      invalid: 'The hostAccessID header is not valid.',
      not_configured:
        'Contract sync has no AppSettings:HostAccessID of its own configured (empty or the shipped placeholder); every request is refused.',
    }[verdict];
    if (verdict !== 'invalid') logger.warn(`contract sync refused (${verdict}) from ${req.ack.clientIp}`);
    return {
      counts: verdict === 'invalid',
      what: 'contract sync invalid hostAccessID',
      problem: {
        status: 401,
        code: ACCESS_ID_PROBLEMS[verdict].code,
        detail,
        headers: { 'WWW-Authenticate': 'hostAccessID' },
      },
    };
  });

  router.post('/', checkAccess, (req, res, next) => {
    void flow.handle(req, res, next, {
      targetFields: ['moduleid', 'contracttype', 'destfilepath', 'changetype'],
      async resolve(fields) {
        const request = await resolveRequest(fields, serviceHome);
        return { change: request.change, targets: request.targets.map((t) => t.absolute), request };
      },
      answer({ request, change, targets, existed, bytes, sha256 }) {
        const result = {
          moduleID: request.moduleID,
          contractType: request.contractType,
          path: request.relative,
          change,
        };
        const written = targets.map((t, i) => ({ path: t, existed: existed[i] }));
        // Heard before the answer leaves, so a client that reads right after its write gets the new file.
        services.contractChanges
          .publish(changeEvent(request))
          .catch((err: unknown) => logger.error('a contract change hook failed', err as Error));
        if (change === 'Deleted') {
          logger.info(`contract sync: deleted ${request.contractType}/${request.relative} of ${request.moduleID}`);
          return void res.json({ ...result, targets: written });
        }
        logger.info(
          `contract sync: wrote ${request.contractType}/${request.relative} of ${request.moduleID} (${bytes} bytes)`,
        );
        res.json({ ...result, bytes, sha256, targets: written });
      },
    });
  });
  router.all('/', (req, res) => {
    res.setHeader('Allow', 'POST');
    sendProblem(
      res,
      { status: 405, code: hostProblems.CONTRACTSYNC_METHOD_NOT_ALLOWED.code, detail: 'Use POST.' },
      req.method,
    );
  });

  return [{ mount: '/contractsync', handler: router, capability: 'contract-sync' }];
}

const changeEvent = (request: ContractSyncRequest): ContractChangeEvent => ({
  moduleId: request.moduleID,
  contractType: request.contractType,
  changeType: request.change,
  files: request.targets.map((t) => t.absolute),
});

/** At start: remove temporary files a write left when a previous run died mid-upload. */
async function sweepTargets(flow: UploadFlow, serviceHome: string, logger: Logger): Promise<void> {
  const roots = [path.join(serviceHome, 'contracts')];
  const modules = await fs.readdir(path.join(serviceHome, 'modules'), { withFileTypes: true }).catch(() => []);
  for (const m of modules) {
    if (m.isDirectory())
      roots.push(
        path.join(serviceHome, 'modules', m.name, 'Contracts'),
        path.join(serviceHome, 'modules', m.name, 'wwwroot'),
      );
  }
  const removed = await flow.sweep(roots);
  if (removed > 0) logger.info(`removed ${removed} temporary file(s) left by an interrupted contract sync`);
}
