import fs from 'node:fs';
import path from 'node:path';
import { basicAuthorization, hostAccessHeader } from './credentials.js';
import { baseUrl, request as requestEndpoint, type RequestSettings } from './http.js';
import type { Outcome } from './outcome.js';
import { EXIT_CODES } from './exit-codes.js';

/** A request to `route` on the host at `url`; the outcome names the host, not the endpoint. */
async function request(
  url: string,
  route: string,
  init: Parameters<typeof requestEndpoint>[1],
  settings: RequestSettings,
): Promise<Outcome> {
  return { ...(await requestEndpoint(`${baseUrl(url)}${route}`, init, settings)), url: baseUrl(url) };
}
export type ChangeType = 'Created' | 'Changed' | 'Deleted';

export interface UploadItem {
  /** Local file (not read for `Deleted`). */
  file?: string;
  /** Path relative to the module's contract folder. */
  remotePath: string;
  /** SHA-256 of the local file, checked against the host's answer. */
  sha256?: string;
}

/** `POST /wwwroot/api/sync/upload` with the original's fields; the answer's sha256 must match the local file's. */
export async function syncUpload(
  url: string,
  token: string,
  module: string,
  change: ChangeType,
  item: UploadItem,
  settings: RequestSettings,
): Promise<Outcome> {
  const outcome = await request(
    url,
    '/wwwroot/api/sync/upload',
    async () => {
      const form = new FormData();
      form.append('moduleName', module);
      form.append('changeType', change);
      form.append('filePath', item.remotePath);
      if (change !== 'Deleted' && item.file)
        form.append('file', await fs.openAsBlob(item.file), path.basename(item.file));
      return { method: 'POST', body: form, headers: { Authorization: basicAuthorization(token) } };
    },
    settings,
  );
  if (!outcome.ok) return outcome;
  const body = outcome.body as { sha256?: string; refresh?: { ok?: boolean; detail?: string } } | undefined;
  if (change !== 'Deleted' && item.sha256 && body?.sha256 !== item.sha256) {
    return {
      ...outcome,
      ok: false,
      exit: EXIT_CODES.failed,
      error: `${outcome.url}: sha256 mismatch: the host stored ${body?.sha256 ?? 'nothing'} (the file changed while it was sent?)`,
    };
  }
  if (body?.refresh && body.refresh.ok === false) {
    return {
      ...outcome,
      ok: false,
      exit: EXIT_CODES.failed,
      error: `${outcome.url} stored the file, but the ${module} refresh failed: ${body.refresh.detail ?? 'no detail'}`,
    };
  }
  return outcome;
}

/**
 * Whether a host takes `token` for its sync API, without changing anything: the refresh route
 * checks the token before its parameters, so a request without parameters answers 400 when the
 * token is good, 401 when it is not, and 404 when the host has no sync API (no wwwroot module).
 */
export async function checkSyncCredentials(url: string, token: string, settings: RequestSettings): Promise<Outcome> {
  const outcome = await request(
    url,
    '/wwwroot/api/sync/refresh',
    () => ({ headers: { Authorization: basicAuthorization(token) } }),
    settings,
  );
  if (outcome.status === 400) return { ...outcome, ok: true, exit: EXIT_CODES.ok, error: undefined };
  if (outcome.status === 404)
    return {
      ...outcome,
      ok: false,
      exit: EXIT_CODES.failed,
      error: `${outcome.url} has no sync API (is the wwwroot module loaded there?)`,
    };
  return outcome;
}

/** `GET /wwwroot/api/sync/refresh`. */
export function syncRefresh(
  url: string,
  token: string,
  module: string,
  change: ChangeType,
  remotePath: string,
  settings: RequestSettings,
): Promise<Outcome> {
  const query = new URLSearchParams({ moduleName: module, changeType: change, filePath: remotePath });
  return request(
    url,
    `/wwwroot/api/sync/refresh?${query}`,
    () => ({ headers: { Authorization: basicAuthorization(token) } }),
    settings,
  );
}

export interface ContractSyncItem {
  file?: string;
  moduleID: string;
  contractType: string;
  destFilePath: string;
  change: ChangeType;
}

/** `POST /contractsync` with the `hostAccessID` header. */
export function contractSync(
  url: string,
  hostAccessID: string,
  item: ContractSyncItem,
  settings: RequestSettings,
): Promise<Outcome> {
  return request(
    url,
    '/contractsync',
    async () => {
      const form = new FormData();
      form.append('moduleID', item.moduleID);
      form.append('contractType', item.contractType);
      form.append('destFilePath', item.destFilePath);
      form.append('changeType', item.change);
      if (item.change !== 'Deleted' && item.file)
        form.append('file', await fs.openAsBlob(item.file), path.basename(item.file));
      return { method: 'POST', body: form, headers: { hostAccessID: hostAccessHeader(hostAccessID) } };
    },
    settings,
  );
}

/** `GET /shared-files/manifest`. */
export function fetchManifest(url: string, settings: RequestSettings): Promise<Outcome> {
  return request(url, '/shared-files/manifest', () => ({ headers: { Accept: 'application/json' } }), settings);
}
