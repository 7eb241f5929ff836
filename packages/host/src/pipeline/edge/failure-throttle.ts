import type { ServerResponse } from 'node:http';
import type { Logger } from '../../logging/logger.js';
import { sendProblem } from '../../http/problem.js';

/**
 * Throttle for failed secret checks (sync Basic tokens, contract-sync `hostAccessID`), per client
 * address (docs/pipeline.md "Failed token checks"): after `max` failures within `windowMs` of the
 * first one, the address gets 429 with `Retry-After` until that window ends, whatever it presents.
 * Logging is collapsed: the first failure of a window is logged at once, the rest are counted and
 * summarised in one line when the window ends. Memory is bounded (oldest addresses go first).
 */
export interface FailureThrottle {
  /** Seconds the address must wait before it may try again; 0 when it may try now. */
  retryAfter(clientIp: string): number;
  /** Records one failed check; `what` says which (`sync invalid_token`), for the log. */
  failed(clientIp: string, what: string): void;
  close(): void;
}

interface Window {
  startedAt: number;
  failures: number;
  refused: number;
  reasons: Map<string, number>;
}

const MAX_ADDRESSES = 10_000;

export function createFailureThrottle(max: number, windowMs: number, logger: Logger): FailureThrottle {
  const windows = new Map<string, Window>();
  let timer: NodeJS.Timeout | undefined;

  const summarise = (ip: string, w: Window) => {
    if (w.failures <= 1 && w.refused === 0) return;
    const reasons = [...w.reasons].map(([r, n]) => `${r} ×${n}`).join(', ');
    logger.warn(`${w.failures} failed access checks from ${ip} in ${Math.round(windowMs / 1000)} s (${reasons}); ${w.refused} refused with 429`);
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

  return {
    retryAfter(ip) {
      if (max === 0 || windows.size === 0) return 0;
      const now = Date.now();
      const w = current(ip, now);
      if (!w || w.failures < max) return 0;
      w.refused++;
      return Math.max(1, Math.ceil((w.startedAt + windowMs - now) / 1000));
    },
    failed(ip, what) {
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
    },
    close() {
      sweep(Number.POSITIVE_INFINITY);
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/** The 429 answer for an address over its limit. */
export function sendThrottled(res: ServerResponse, seconds: number, method: string): void {
  sendProblem(res, {
    status: 429,
    code: 'request.too_many_failed_checks',
    detail: `Too many failed access checks from this address; try again in ${seconds} s.`,
    headers: { 'Retry-After': String(seconds) },
  }, method);
}
