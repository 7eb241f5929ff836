import fs from 'node:fs';
import { basicAuthorization, hostAccessHeader } from './credentials.js';
import { baseUrl, request as requestEndpoint, type RequestSettings } from './http.js';
import type { Outcome } from './outcome.js';
import { EXIT } from '../../exit-codes.js';
import { multipartBody, multipartRequest, type FormPart, type MultipartBody, type SentFile } from './multipart-body.js';
import { fileBody, type FileBody } from './file-body.js';

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

/** Files past this size go as the whole body of a PUT, when the host takes one (docs/sync.md "One big file"). */
const BODY_UPLOAD_BYTES = 1024 * 1024;
/** Hosts (base URLs) that answered such a PUT as an older host does: they get the form from then on. */
const formOnly = new Set<string>();

/**
 * `PUT /wwwroot/api/sync/upload?moduleName=&changeType=&filePath=` with the file as the body
 * (docs/wire-formats.md "Sync upload of one file"); undefined when the host does not offer it (an
 * older ack, the original host: 404, 405 or 501), which is then remembered for this run.
 */
async function putUpload(
  url: string,
  token: string,
  module: string,
  change: ChangeType,
  item: UploadItem & { file: string },
  settings: RequestSettings,
): Promise<{ outcome: Outcome; body?: FileBody } | undefined> {
  let body: FileBody | undefined;
  const query = new URLSearchParams({ moduleName: module, changeType: change, filePath: item.remotePath });
  const outcome = await request(
    url,
    `/wwwroot/api/sync/upload?${query}`,
    async () => {
      body = await fileBody(item.file);
      return {
        method: 'PUT',
        body: body.write,
        headers: {
          Authorization: basicAuthorization(token),
          'Content-Type': 'application/octet-stream',
          'Content-Length': String(body.bytes),
        },
      };
    },
    settings,
  );
  if (outcome.status === 404 || outcome.status === 405 || outcome.status === 501) {
    formOnly.add(baseUrl(url));
    return undefined;
  }
  return { outcome, body };
}

/**
 * One file (or a deletion) to one host: `POST /wwwroot/api/sync/upload` with the original's fields,
 * or, for a big file, a PUT of the file itself when the host takes it. The file is hashed as it is
 * sent, and the answer's sha256 must match the digest of what went out (the outcome's `sent`).
 */
export async function syncUpload(
  url: string,
  token: string,
  module: string,
  change: ChangeType,
  item: UploadItem,
  settings: RequestSettings,
): Promise<Outcome & { sent?: SentFile }> {
  let body: Pick<MultipartBody, 'sent'> | undefined;
  let outcome: Outcome | undefined;
  const file = change === 'Deleted' ? undefined : item.file;
  if (
    file &&
    !formOnly.has(baseUrl(url)) &&
    (fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0) > BODY_UPLOAD_BYTES
  ) {
    const put = await putUpload(url, token, module, change, { ...item, file }, settings);
    if (put) ({ outcome, body } = put);
  }
  outcome ??= await request(
    url,
    '/wwwroot/api/sync/upload',
    async () => {
      const parts: FormPart[] = [
        { name: 'moduleName', value: module },
        { name: 'changeType', value: change },
        { name: 'filePath', value: item.remotePath },
      ];
      if (file) parts.push({ name: 'file', file });
      const form = await multipartBody(parts);
      body = form;
      return multipartRequest(form, { Authorization: basicAuthorization(token) });
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
      exit: EXIT.failed,
      error: `${outcome.url}: sha256 mismatch: the host stored ${answer?.sha256 ?? 'nothing'} (the file changed while it was sent?)`,
    };
  }
  if (answer?.refresh && answer.refresh.ok === false) {
    return {
      ...outcome,
      ok: false,
      exit: EXIT.failed,
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
  if (outcome.status === 400) return { ...outcome, ok: true, exit: EXIT.ok, error: undefined };
  if (outcome.status === 404)
    return {
      ...outcome,
      ok: false,
      exit: EXIT.failed,
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
