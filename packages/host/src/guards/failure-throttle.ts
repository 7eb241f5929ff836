import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../logging/logger.js';
import { sendProblem, type Problem } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';

/**
 * Throttle for failed secret checks (sync Basic tokens, contract-sync `hostAccessID`), per client
 * address (docs/pipeline.md "Failed token checks"): after `max` failures within `windowMs` of the
 * first one, the address gets 429 with `Retry-After` until that window ends, whatever it presents.
 * Logging is collapsed: the first failure of a window is logged at once, the rest are counted and
 * summarised in one line when the window ends. Memory is bounded (oldest addresses go first).
 */
export interface FailureThrottle {
  /**
   * The one place a route checks a secret (Express middleware, before the body is read): 429 with
   * `Retry-After` while the client address is over its limit, whatever it presents; else `check`
   * runs, and a refusal it returns is answered, counted when `counts` says so. No refusal: next.
   */
  guard(check: (req: Request) => AccessRefusal | undefined): RequestHandler;
}

/** The host's handle: it writes the last summary lines and stops the timer when it stops. */
export interface HostFailureThrottle extends FailureThrottle {
  close(): void;
}

/** A failed secret check, as `FailureThrottle.guard` answers it. */
export interface AccessRefusal {
  /** The answer (a 401 problem). */
  problem: Problem;
  /** A wrong or malformed secret counts against the address; a missing one does not (no guess). */
  counts: boolean;
  /** What failed, for the collapsed log line (`sync invalid_token`). */
  what: string;
}

interface Window {
  startedAt: number;
  failures: number;
  refused: number;
  reasons: Map<string, number>;
}

const MAX_ADDRESSES = 10_000;

export function createFailureThrottle(max: number, windowMs: number, logger: Logger): HostFailureThrottle {
  const windows = new Map<string, Window>();
  let timer: NodeJS.Timeout | undefined;

  const summarise = (ip: string, w: Window) => {
    if (w.failures <= 1 && w.refused === 0) return;
    const reasons = [...w.reasons].map(([r, n]) => `${r} ×${n}`).join(', ');
    logger.warn(
      `${w.failures} failed access checks from ${ip} in ${Math.round(windowMs / 1000)} s (${reasons}); ${w.refused} refused with 429`,
    );
  };
  const sweep = (now: number) => {
    for (const [ip, w] of windows) {
      if (now - w.startedAt < windowMs) continue;
      summarise(ip, w);
      windows.delete(ip);
    }
    if (windows.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const current = (ip: string, now: number): Window | undefined => {
    const w = windows.get(ip);
    if (w && now - w.startedAt >= windowMs) {
      summarise(ip, w);
      windows.delete(ip);
      return undefined;
    }
    return w;
  };

  /** Seconds the address must wait before it may try again; 0 when it may try now. */
  const retryAfter = (ip: string): number => {
    if (max === 0 || windows.size === 0) return 0;
    const now = Date.now();
    const w = current(ip, now);
    if (!w || w.failures < max) return 0;
    w.refused++;
    return Math.max(1, Math.ceil((w.startedAt + windowMs - now) / 1000));
  };
  /** Records one failed check; `what` says which (`sync invalid_token`), for the log. */
  const failed = (ip: string, what: string): void => {
    const now = Date.now();
    let w = current(ip, now);
    if (!w) {
      if (windows.size >= MAX_ADDRESSES) {
        const oldest = windows.keys().next().value;
        if (oldest !== undefined) windows.delete(oldest);
      }
      w = { startedAt: now, failures: 0, refused: 0, reasons: new Map() };
      windows.set(ip, w);
      logger.warn(`${what} from ${ip}`);
      timer ??= setInterval(() => sweep(Date.now()), Math.min(windowMs, 10_000)).unref();
    }
    w.failures++;
    w.reasons.set(what, (w.reasons.get(what) ?? 0) + 1);
  };

  return {
    guard(check) {
      return (req, res, next) => {
        const clientIp = req.ack.clientIp;
        const wait = retryAfter(clientIp);
        if (wait > 0) return sendThrottled(res, wait, req.method);
        const refusal = check(req);
        if (!refusal) return next();
        if (refusal.counts) failed(clientIp, refusal.what);
        sendProblem(res, refusal.problem, req.method);
      };
    },
    close() {
      sweep(Number.POSITIVE_INFINITY);
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/** The 429 answer for an address over its limit. */
function sendThrottled(res: ServerResponse, seconds: number, method: string): void {
  sendProblem(
    res,
    {
      status: 429,
      code: hostProblems.REQUEST_TOO_MANY_FAILED_CHECKS.code,
      detail: `Too many failed access checks from this address; try again in ${seconds} s.`,
      headers: { 'Retry-After': String(seconds) },
    },
    method,
  );
}
