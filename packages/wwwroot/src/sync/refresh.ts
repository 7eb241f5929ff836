import type { ChangeType } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { wwwrootProblems } from '../problem-codes.js';

/** Refresh routes of the modules that have one, as the original host names them (docs/compatibility.md). */
export const REFRESH_ROUTES: Readonly<Record<string, string>> = {
  transact: 'transact/api/transaction/refresh',
  dbclient: 'dbclient/api/query/refresh',
  graphclient: 'graphclient/api/query/refresh',
  function: 'function/api/execution/refresh',
};

const MAX_RELAYED_BYTES = 64 * 1024;

export interface RefreshRequest {
  module: string;
  change: ChangeType;
  /** Path relative to the module's contract folder, `/` separated. */
  relative: string;
  absolute: string;
  /** Every file of a release switch, told as one change (docs/releases.md "Refresh and live reload"). */
  files?: readonly string[];
  /** The caller's `AuthorizationKey` header, forwarded when present. */
  authorizationKey?: string;
}

export interface RefreshOutcome {
  ok: boolean;
  /** How the module was told: its cache dropped (wwwroot), its refresh route, its in-process hook, or not at all. */
  via: 'cache' | 'route' | 'hook' | 'none';
  /** Status of the module's refresh route. */
  status?: number;
  /** The refresh route's answer (JSON when it is JSON, else text). */
  body?: unknown;
  contentType?: string;
  /** Why it failed (`sync.refresh_failed`, `sync.refresh_timeout`). */
  code?: string;
  detail?: string;
}

/**
 * Tells the target module that a contract file changed (docs/sync.md "Refresh"): publishes the
 * host's one contract change, which drops every cached copy of the file (wwwroot's among them).
 * A module loaded in this host is told in process, through its `refreshContract` hook (the module
 * contract), within the time-out. Otherwise, for a module with
 * the original's refresh route (a module that has no hook, or lives in another process behind this
 * address), calls that route on this host's own listening address (never an address a caller
 * chose), forwarding `AuthorizationKey`, with a time-out. Never throws: the outcome says what happened.
 */
export async function refreshModule(
  runtime: WwwrootRuntime,
  request: RefreshRequest,
  timeoutMs: number,
): Promise<RefreshOutcome> {
  const host = runtime.ctx.host;
  // One contract change, published once: every worker's caches and live reload hear it, and the
  // module's `refreshContract` hook runs in each (docs/modules.md "Contract changes").
  const published = host.contractChanges.publish({
    moduleId: request.module,
    changeType: request.change,
    filePath: request.relative,
    files: request.files ?? [request.absolute],
  });
  if (request.module === 'wwwroot') {
    await published.catch(() => false);
    return { ok: true, via: 'cache' };
  }
  let hooked: boolean;
  try {
    hooked = await withinTime(published, timeoutMs);
  } catch (err) {
    if (err instanceof HookTimeoutError) {
      return {
        ok: false,
        via: 'hook',
        code: wwwrootProblems.SYNC_REFRESH_TIMEOUT.code,
        detail: `The ${request.module} refresh did not finish within ${timeoutMs} ms.`,
      };
    }
    return {
      ok: false,
      via: 'hook',
      code: wwwrootProblems.SYNC_REFRESH_FAILED.code,
      detail: `The module's refresh failed: ${(err as Error).message}`,
    };
  }
  if (hooked) return { ok: true, via: 'hook' };
  const route = REFRESH_ROUTES[request.module];
  if (!route) return { ok: true, via: 'none' };
  const base = host.selfUrl();
  if (!base)
    return {
      ok: false,
      via: 'route',
      code: wwwrootProblems.SYNC_REFRESH_FAILED.code,
      detail: 'The host is not listening yet.',
    };
  const url = `${base}/${route}?changeType=${encodeURIComponent(request.change)}&filePath=${encodeURIComponent(request.relative)}`;
  try {
    // Through the host, so the refresh call carries the upload's trace (docs/operations.md "Traces").
    const response = await host.traces.fetch(url, {
      headers: {
        AuthorizationKey: request.authorizationKey || runtime.settings.authorizationKey,
        Accept: 'application/json',
      },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const contentType = response.headers.get('content-type') ?? undefined;
    const text = (await response.text()).slice(0, MAX_RELAYED_BYTES);
    let body: unknown = text;
    if (contentType?.includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        /* relay as text */
      }
    }
    if (response.ok) return { ok: true, via: 'route', status: response.status, body, contentType };
    return {
      ok: false,
      via: 'route',
      status: response.status,
      body,
      code: wwwrootProblems.SYNC_REFRESH_FAILED.code,
      detail: `The ${request.module} refresh route answered ${response.status}.`,
    };
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return {
        ok: false,
        via: 'route',
        code: wwwrootProblems.SYNC_REFRESH_TIMEOUT.code,
        detail: `The ${request.module} refresh route did not answer within ${timeoutMs} ms.`,
      };
    }
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return {
      ok: false,
      via: 'route',
      code: wwwrootProblems.SYNC_REFRESH_FAILED.code,
      detail: `The ${request.module} refresh route could not be called${cause ? ` (${cause})` : ''}.`,
    };
  }
}

class HookTimeoutError extends Error {}

/** Settles as `work` does, or rejects with `HookTimeoutError` after `ms` (the hook keeps running). */
function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HookTimeoutError()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The refresh outcome as the upload and batch answers show it (without the relayed content type). */
export function publicOutcome(outcome: RefreshOutcome): Record<string, unknown> {
  const { contentType: _contentType, ...rest } = outcome;
  return rest;
}
