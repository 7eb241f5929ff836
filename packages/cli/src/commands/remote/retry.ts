/** Retries with back-off on network errors, 429 and 5xx (docs/sync.md "The commands"). */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** Delay before the first retry; doubled for each further one. */
  baseMs: number;
  /** Longest wait between attempts (also caps Retry-After). */
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseMs: 300, maxMs: 5_000 };

/** Worth another attempt: the host could not be reached, is overloaded, or failed on its side. */
export function isRetryable(outcome: { status?: number; networkError?: boolean }): boolean {
  if (outcome.networkError) return true;
  const status = outcome.status ?? 0;
  return status === 429 || status >= 500;
}

/**
 * Wait before retry number `attempt` (1-based): exponential with jitter (half to full), or the
 * server's `Retry-After` (seconds or an HTTP date) when it gives one; never over `maxMs`.
 */
export function retryDelayMs(
  attempt: number,
  policy: RetryPolicy,
  retryAfter?: string | null,
  now = Date.now(),
  random = Math.random,
): number {
  if (retryAfter) {
    const seconds = Number(retryAfter);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - now;
    if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, policy.maxMs);
  }
  const full = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  return Math.round(full * (0.5 + random() / 2));
}
