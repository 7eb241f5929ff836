import { v7 as uuidv7 } from 'uuid';
import { ProblemError } from '@ack/host';
import { wwwrootProblems } from '../problem-codes.js';

/**
 * `create-id`: a request id kept for `fromMinutes` (docs/helper-apis.md). Ids are kept in memory, bounded
 * (the oldest go first when full), and forgotten when they expire. Only callers whose `Origin`
 * (else `Referer`) is in `WithOrigins` get one; when `CreateIDPolicy.IsEnabled`, each client
 * address gets at most `PermitLimit` ids per `WindowSeconds` (fixed window), else 429.
 */

export interface CreateIdPolicy {
  IsEnabled: boolean;
  PermitLimit: number;
  WindowSeconds: number;
}

export const MAX_FROM_MINUTES = 1440;
const DEFAULT_FROM_MINUTES = 10;
const MAX_KEPT = 10_000;

export interface KeptId {
  requestID: string;
  expiresAt: string;
}

export function normalizeOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The caller's origin: `Origin`, else the origin of `Referer`; `null` origins count as none. */
export function callerOrigin(origin: string | undefined, referer: string | undefined): string | undefined {
  if (origin && origin !== 'null') return normalizeOrigin(origin);
  return referer ? normalizeOrigin(referer) : undefined;
}

export function parseFromMinutes(value: unknown): number {
  if (value === undefined || value === '' || value === null) return DEFAULT_FROM_MINUTES;
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_FROM_MINUTES)) {
    throw new ProblemError({
      status: 400,
      code: wwwrootProblems.INDEX_INVALID_FROM_MINUTES.code,
      detail: `fromMinutes must be a whole number from 1 to ${MAX_FROM_MINUTES}.`,
    });
  }
  return n;
}

export function createIdIssuer(withOrigins: readonly string[], policy: CreateIdPolicy, now: () => number = Date.now) {
  const allowed = new Set(withOrigins.map(normalizeOrigin).filter((o): o is string => o !== undefined));
  const kept = new Map<string, number>();
  const windows = new Map<string, { start: number; used: number }>();

  const sweep = (t: number) => {
    for (const [id, exp] of kept) if (exp <= t) kept.delete(id);
    for (const [client, w] of windows) if (t - w.start >= policy.WindowSeconds * 1000) windows.delete(client);
  };

  return {
    /** Throws a 403 or 429 problem when the caller may not have an id. */
    issue(origin: string | undefined, clientIp: string, fromMinutes: number): KeptId {
      if (!origin || !allowed.has(origin)) {
        throw new ProblemError({
          status: 403,
          code: wwwrootProblems.INDEX_ORIGIN_NOT_ALLOWED.code,
          detail:
            'create-id is only for screens served from an origin listed in AppSettings:WithOrigins (Origin or Referer header).',
        });
      }
      const t = now();
      if (kept.size >= MAX_KEPT || windows.size >= MAX_KEPT) sweep(t);
      if (policy.IsEnabled) {
        let w = windows.get(clientIp);
        if (!w || t - w.start >= policy.WindowSeconds * 1000) {
          w = { start: t, used: 0 };
          windows.set(clientIp, w);
        }
        if (w.used >= policy.PermitLimit) {
          const retry = Math.max(1, Math.ceil((w.start + policy.WindowSeconds * 1000 - t) / 1000));
          throw new ProblemError({
            status: 429,
            code: wwwrootProblems.INDEX_CREATE_ID_RATE_LIMITED.code,
            detail: `At most ${policy.PermitLimit} ids per ${policy.WindowSeconds} seconds (ModuleConfig:CreateIDPolicy).`,
            headers: { 'Retry-After': String(retry) },
          });
        }
        w.used++;
      }
      while (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
      const requestID = uuidv7().replace(/-/g, '');
      const exp = t + fromMinutes * 60_000;
      kept.set(requestID, exp);
      return { requestID, expiresAt: new Date(exp).toISOString() };
    },
    /** The id's expiry if it was issued here and has not expired. */
    check(requestID: string): string | undefined {
      const exp = kept.get(requestID);
      if (exp === undefined) return undefined;
      if (exp <= now()) {
        kept.delete(requestID);
        return undefined;
      }
      return new Date(exp).toISOString();
    },
  };
}
