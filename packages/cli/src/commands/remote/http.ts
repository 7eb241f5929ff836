import { DEFAULT_RETRY, isRetryable, retryDelayMs, type RetryPolicy } from './retry.js';
import { exitForStatus, type Outcome } from './outcome.js';
import { EXIT_CODES } from './exit-codes.js';

export interface RequestSettings {
  retry: RetryPolicy;
  /** Per attempt. */
  timeoutMs: number;
}

export const DEFAULT_REQUEST: RequestSettings = { retry: DEFAULT_RETRY, timeoutMs: 60_000 };

/** Base URL without a trailing `/`. */
export function baseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const code = e.cause?.code ?? e.cause?.message ?? e.message ?? 'network error';
  return String(code);
}

function problemSummary(body: unknown): string {
  if (body && typeof body === 'object') {
    const p = body as { code?: unknown; detail?: unknown; title?: unknown };
    const parts = [p.code, p.detail ?? p.title].filter((x) => typeof x === 'string');
    if (parts.length > 0) return parts.join(': ');
  }
  return typeof body === 'string' ? body.replace(/\s+/g, ' ').slice(0, 200) : '';
}

/**
 * One request to one host, retried with back-off on network errors, 429 and 5xx. `init` builds
 * the request anew for each attempt (a body can be sent once). Never throws.
 */
export async function request(
  url: string,
  init: () => Promise<RequestInit> | RequestInit,
  settings: RequestSettings = DEFAULT_REQUEST,
): Promise<Outcome> {
  const origin = new URL(url).origin;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, {
        ...(await init()),
        signal: AbortSignal.timeout(settings.timeoutMs),
        redirect: 'manual',
      });
    } catch (err) {
      const reason = describeNetworkError(err, settings.timeoutMs);
      if ((err as Error).name === 'NotReadableError' || (err as { code?: string }).code === 'ENOENT') {
        return {
          url,
          ok: false,
          error: `cannot read the local file: ${(err as Error).message}`,
          exit: EXIT_CODES.failed,
        };
      }
      if (attempt < settings.retry.retries) {
        await sleep(retryDelayMs(attempt + 1, settings.retry));
        continue;
      }
      return { url, ok: false, error: `cannot reach ${origin} (${reason})`, exit: EXIT_CODES.failed };
    }
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        /* keep the text */
      }
    }
    if (response.ok) return { url, ok: true, status: response.status, body, exit: EXIT_CODES.ok };
    if (isRetryable({ status: response.status }) && attempt < settings.retry.retries) {
      await sleep(retryDelayMs(attempt + 1, settings.retry, response.headers.get('retry-after')));
      continue;
    }
    const summary = problemSummary(body);
    const what =
      response.status === 401 || response.status === 403
        ? `${origin} refused the credentials`
        : `${origin} answered ${response.status}`;
    return {
      url,
      ok: false,
      status: response.status,
      body,
      error: summary ? `${what} (${summary})` : what,
      exit: exitForStatus(response.status),
    };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
