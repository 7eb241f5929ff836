import { randomBytes } from 'node:crypto';
import { basicAuthorization } from './credentials.js';
import { fileBody, type FileBody } from './file-body.js';
import { baseUrl, request, type RequestSettings } from './http.js';
import { EXIT } from '../../exit-codes.js';
import type { Outcome } from './outcome.js';

// The client side of the release endpoints (docs/wire-formats.md "Sync releases"): stage, send
// files into the stage, commit (the switch), discard, list, roll back.

/** One release as the host lists it (docs/releases.md "Manifest and history"). */
export interface ReleaseEntry {
  id: string;
  prefix: string;
  time: string;
  by: string;
  files: number;
  bytes: number;
  digest: string;
  live?: boolean;
}

const isRelease = (v: unknown): v is ReleaseEntry => {
  const r = v as ReleaseEntry;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.id === 'string' &&
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(r.id) &&
    typeof r.prefix === 'string' &&
    typeof r.time === 'string' &&
    typeof r.by === 'string' &&
    Number.isSafeInteger(r.files) &&
    r.files >= 0 &&
    Number.isSafeInteger(r.bytes) &&
    r.bytes >= 0 &&
    typeof r.digest === 'string' &&
    (r.live === undefined || typeof r.live === 'boolean')
  );
};

/**
 * The releases in a host's answer to `GET /` (docs/wire-formats.md "Sync releases"), or undefined
 * when it is not that answer: a host's answer is outside input, checked before it is printed.
 */
export function readReleaseList(body: unknown): ReleaseEntry[] | undefined {
  const releases = (body as { releases?: unknown } | null | undefined)?.releases;
  if (!Array.isArray(releases) || !releases.every(isRelease)) return undefined;
  return releases.map(({ id, prefix, time, by, files, bytes, digest, live }) => ({
    id,
    prefix,
    time,
    by,
    files,
    bytes,
    digest,
    live: live === true,
  }));
}

/** One release (a commit's or rollback's answer), or undefined when it is not one. */
export const readRelease = (body: unknown): ReleaseEntry | undefined => (isRelease(body) ? body : undefined);

export interface ReleaseTarget {
  url: string;
  token: string;
  module: string;
  /** The release prefix, `/`-separated, e.g. `HDS/`. */
  prefix: string;
  settings: RequestSettings;
}

const route = (t: ReleaseTarget, tail: string, extra: Record<string, string> = {}) =>
  `${baseUrl(t.url)}/wwwroot/api/sync/releases${tail}?${new URLSearchParams({ moduleName: t.module, path: t.prefix, ...extra })}`;

const call = async (t: ReleaseTarget, method: string, tail: string, extra?: Record<string, string>) => ({
  ...(await request(
    route(t, tail, extra),
    () => ({ method, headers: { Authorization: basicAuthorization(t.token), Accept: 'application/json' } }),
    t.settings,
  )),
  url: baseUrl(t.url),
});

/** True when the host has no release endpoints (releases off, or an older host). */
export const noReleases = (o: Outcome) => !o.ok && (o.status === 404 || o.status === 405) && !isReleaseProblem(o);

/** A 404 the release store itself answered (`release.not_staged`, `release.not_found`), not a missing route. */
const isReleaseProblem = (o: Outcome) =>
  typeof (o.body as { code?: unknown } | undefined)?.code === 'string' &&
  String((o.body as { code: string }).code).startsWith('release.');

/**
 * `POST /stage?id=`: the staging's id in `body.id` when ok. A fleet stages under one id, so that
 * every host names the same release (`ack sync status` compares the live ids).
 */
export const stageRelease = (t: ReleaseTarget, id: string) => call(t, 'POST', '/stage', { id });

/** A new release id in the host's own form: `r-<UTC time to the millisecond>-<4 hex digits>`. */
export function newReleaseId(now = new Date()): string {
  const time = now.toISOString().replace(/[-:.]/g, '');
  return `r-${time}-${randomBytes(2).toString('hex')}`;
}

/** `POST /stage/<id>/commit`: the switch; the manifest now live in `body`. */
export const commitRelease = (t: ReleaseTarget, id: string) =>
  call(t, 'POST', `/stage/${encodeURIComponent(id)}/commit`);

/** `DELETE /stage/<id>`: the staging removed, nothing switched. */
export const discardRelease = (t: ReleaseTarget, id: string) => call(t, 'DELETE', `/stage/${encodeURIComponent(id)}`);

/** `GET /`: the releases of the prefix, newest first. */
export const listReleases = (t: ReleaseTarget) => call(t, 'GET', '/');

/** `GET /live`: every prefix with releases on the host and its live release. */
export const listLiveReleases = (t: Omit<ReleaseTarget, 'prefix'>) => call({ ...t, prefix: '' }, 'GET', '/live');

/**
 * The prefixes and live ids in a host's answer to `GET /live`, or undefined when it is not that
 * answer (outside input, checked before it is compared or printed).
 */
export function readLiveReleases(body: unknown): Map<string, string | null> | undefined {
  const prefixes = (body as { prefixes?: unknown } | null | undefined)?.prefixes;
  if (!Array.isArray(prefixes)) return undefined;
  const out = new Map<string, string | null>();
  for (const p of prefixes as { prefix?: unknown; live?: unknown }[]) {
    if (typeof p?.prefix !== 'string' || !(p.live === null || typeof p.live === 'string')) return undefined;
    out.set(p.prefix, p.live);
  }
  return out;
}

/** `POST /rollback[?to=]`: the manifest now live. */
export const rollbackRelease = (t: ReleaseTarget, to?: string) =>
  call(t, 'POST', '/rollback', to === undefined ? {} : { to });

/** `DELETE /stage/<id>/file?filePath=`: one name removed from the stage. */
export const deleteStagedFile = (t: ReleaseTarget, id: string, filePath: string) =>
  call(t, 'DELETE', `/stage/${encodeURIComponent(id)}/file`, { filePath });

/**
 * `PUT /stage/<id>/file?filePath=` with the file as the whole body, hashed as it is sent; the
 * host's digest must be that of what went out.
 */
export async function putStagedFile(
  t: ReleaseTarget,
  id: string,
  filePath: string,
  file: string,
): Promise<Outcome & { sha256?: string }> {
  let body: FileBody | undefined;
  const outcome = {
    ...(await request(
      route(t, `/stage/${encodeURIComponent(id)}/file`, { filePath }),
      async () => {
        body = await fileBody(file);
        return {
          method: 'PUT',
          body: body.write,
          headers: {
            Authorization: basicAuthorization(t.token),
            'Content-Type': 'application/octet-stream',
            'Content-Length': String(body.bytes),
          },
        };
      },
      t.settings,
    )),
    url: baseUrl(t.url),
  };
  if (!outcome.ok) return outcome;
  const sent = body?.sent[0]?.sha256;
  const stored = (outcome.body as { sha256?: string } | undefined)?.sha256;
  if (sent && stored !== sent)
    return {
      ...outcome,
      ok: false,
      exit: EXIT.failed,
      error: `${outcome.url}: sha256 mismatch: the host stored ${stored ?? 'nothing'} (the file changed while it was sent?)`,
    };
  return { ...outcome, sha256: sent };
}
