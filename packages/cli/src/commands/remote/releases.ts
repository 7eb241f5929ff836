import { basicAuthorization } from './credentials.js';
import { baseUrl, request, type RequestSettings } from './http.js';
import type { Outcome } from './outcome.js';

// The client of a host's releases (docs/releases.md, docs/wire-formats.md "Sync releases"): open a
// stage, switch it live, discard it, list a prefix's releases, roll back.

const RELEASES = '/wwwroot/api/sync/releases';

/** A release being staged on one host, and the query that sends uploads and batches into it. */
export interface OpenStage {
  url: string;
  id: string;
  prefix: string;
  /** `release=<id>&releasePath=<prefix>`, for the sync write routes. */
  writeQuery: string;
}

/** A release prefix as the host takes it: `HDS/TST/` (slashes either way, one at the end). */
export function releasePrefix(pathOption: string | undefined): string | undefined {
  const segments = (pathOption ?? '')
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  return segments.length === 0 ? undefined : `${segments.join('/')}/`;
}

function call(
  url: string,
  route: string,
  query: Record<string, string>,
  method: string,
  token: string,
  settings: RequestSettings,
): Promise<Outcome> {
  // A switch or a rollback is not retried on its own: the host may have switched before an error.
  const once = method === 'GET' ? settings : { ...settings, retry: { ...settings.retry, retries: 0 } };
  return request(
    `${baseUrl(url)}${RELEASES}${route}?${new URLSearchParams(query)}`,
    () => ({ method, headers: { Authorization: basicAuthorization(token) } }),
    once,
  ).then((o) => ({ ...o, url: baseUrl(url) }));
}

/**
 * Opens a stage of `prefix` on the host at `url`: the stage, or `absent` when the host has no
 * releases (404: an older host, or releases off), or the failed outcome.
 */
export async function openStage(
  url: string,
  token: string,
  module: string,
  prefix: string,
  settings: RequestSettings,
): Promise<{ stage: OpenStage } | { absent: Outcome } | { failed: Outcome }> {
  const o = await call(url, '/stage', { moduleName: module, path: prefix }, 'POST', token, settings);
  if (o.ok) {
    const { id } = o.body as { id: string };
    const writeQuery = new URLSearchParams({ release: id, releasePath: prefix }).toString();
    return { stage: { url: o.url, id, prefix, writeQuery } };
  }
  // Opening a stage has no 404 of its own: a 404 is a host without the releases routes.
  if (o.status === 404) return { absent: o };
  return { failed: o };
}

export const commitStage = (s: OpenStage, token: string, module: string, settings: RequestSettings) =>
  call(s.url, `/stage/${s.id}/commit`, { moduleName: module, path: s.prefix }, 'POST', token, settings);

export const discardStage = (s: OpenStage, token: string, module: string, settings: RequestSettings) =>
  call(s.url, `/stage/${s.id}`, { moduleName: module, path: s.prefix }, 'DELETE', token, settings);

export const listReleases = (url: string, token: string, module: string, prefix: string, settings: RequestSettings) =>
  call(url, '', { moduleName: module, path: prefix }, 'GET', token, settings);

export const rollbackRelease = (
  url: string,
  token: string,
  module: string,
  prefix: string,
  to: string | undefined,
  settings: RequestSettings,
) => call(url, '/rollback', { moduleName: module, path: prefix, ...(to ? { to } : {}) }, 'POST', token, settings);
