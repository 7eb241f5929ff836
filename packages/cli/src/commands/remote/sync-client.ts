import { basicAuthorization, hostAccessHeader } from './credentials.js';
import { baseUrl, request as requestEndpoint, type RequestSettings } from './http.js';
import type { Outcome } from './outcome.js';
import { EXIT_CODES } from './exit-codes.js';
import { multipartBody, multipartRequest, type FormPart, type MultipartBody, type SentFile } from './multipart-body.js';

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

/**
 * `POST /wwwroot/api/sync/upload` with the original's fields. The file is hashed as it is sent, and
 * the answer's sha256 must match the digest of what went out (the outcome's `sent`).
 */
export async function syncUpload(
  url: string,
  token: string,
  module: string,
  change: ChangeType,
  item: UploadItem,
  settings: RequestSettings,
): Promise<Outcome & { sent?: SentFile }> {
  let body: MultipartBody | undefined;
  const outcome = await request(
    url,
    '/wwwroot/api/sync/upload',
    async () => {
      const parts: FormPart[] = [
        { name: 'moduleName', value: module },
        { name: 'changeType', value: change },
        { name: 'filePath', value: item.remotePath },
      ];
      if (change !== 'Deleted' && item.file) parts.push({ name: 'file', file: item.file });
      body = await multipartBody(parts);
      return multipartRequest(body, { Authorization: basicAuthorization(token) });
    },
    settings,
  );
  if (!outcome.ok) return outcome;
  const sent = body?.sent[0];
  const answer = outcome.body as { sha256?: string; refresh?: { ok?: boolean; detail?: string } } | undefined;
  // The host must have stored the bytes that went out.
  const expected = change === 'Deleted' ? undefined : (sent?.sha256 ?? item.sha256);
  if (expected && answer?.sha256 !== expected) {
    return {
      ...outcome,
      ok: false,
      exit: EXIT_CODES.failed,
      error: `${outcome.url}: sha256 mismatch: the host stored ${answer?.sha256 ?? 'nothing'} (the file changed while it was sent?)`,
    };
  }
  if (answer?.refresh && answer.refresh.ok === false) {
    return {
      ...outcome,
      ok: false,
      exit: EXIT_CODES.failed,
      error: `${outcome.url} stored the file, but the ${module} refresh failed: ${answer.refresh.detail ?? 'no detail'}`,
    };
  }
  return { ...outcome, sent };
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
      const parts: FormPart[] = [
        { name: 'moduleID', value: item.moduleID },
        { name: 'contractType', value: item.contractType },
        { name: 'destFilePath', value: item.destFilePath },
        { name: 'changeType', value: item.change },
      ];
      if (item.change !== 'Deleted' && item.file) parts.push({ name: 'file', file: item.file });
      return multipartRequest(await multipartBody(parts), { hostAccessID: hostAccessHeader(hostAccessID) });
    },
    settings,
  );
}

/** `GET /shared-files/manifest`. */
export function fetchManifest(url: string, settings: RequestSettings): Promise<Outcome> {
  return request(url, '/shared-files/manifest', () => ({ headers: { Accept: 'application/json' } }), settings);
}
