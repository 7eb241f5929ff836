import http, { type IncomingHttpHeaders } from 'node:http';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DEFAULT_RETRY, isRetryable, retryDelayMs, type RetryPolicy } from './retry.js';
import { exitForStatus, type Outcome } from './outcome.js';
import { EXIT } from '../../exit-codes.js';

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
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError') return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const code = e.code ?? e.message ?? 'network error';
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
 * Writes a body to the request as it is read, and resolves once all of it was taken; each write is
 * awaited (its buffer may then be used again). The request declares the length in its headers.
 */
export type BodyWriter = (out: Writable) => Promise<void>;

/**
 * A request as a command builds it. The body, when any, is whole, streamed (sent chunked), or
 * written by a `BodyWriter`.
 */
export interface RequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: Uint8Array | AsyncIterable<Uint8Array> | BodyWriter;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

/** Thrown when a host does not answer within the time allowed for one attempt. */
class NoAnswerError extends Error {
  constructor() {
    super('no answer');
    this.name = 'TimeoutError';
  }
}

/**
 * One exchange over `node:http`/`node:https` (rather than `fetch`: nothing more to load at start,
 * and a body goes to the socket as it is, without the copies web streams make; docs/sync.md
 * "Speed"). Redirects are not followed. Rejects on a network error, a body that cannot be read, or
 * no whole answer within `timeoutMs`.
 */
async function exchange(url: URL, init: RequestInit, timeoutMs: number): Promise<Answer> {
  // TLS is loaded only for an https host: a plain one starts sooner.
  const client = url.protocol === 'https:' ? await import('node:https') : http;
  return new Promise<Answer>((resolve, reject) => {
    const body = init.body;
    const headers: Record<string, string> = { ...init.headers };
    if (body instanceof Uint8Array) headers['Content-Length'] = String(body.byteLength);
    let settled = false;
    const settle = (err: Error | undefined, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
        return;
      }
      // An answer before the whole body went out is a refusal (or a host without the route): the
      // rest is not sent (docs/sync.md "One big file").
      if (!req.writableFinished) req.destroy();
      resolve(answer!);
    };
    const timer = setTimeout(() => settle(new NoAnswerError()), timeoutMs);
    const req = client.request(url, { method: init.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => settle(err));
      res.on('end', () =>
        settle(undefined, {
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes: Buffer.concat(chunks),
        }),
      );
    });
    // A host that answers before the body is all sent (a refusal) may close the connection on
    // the rest: the answer, once it has come, is what counts.
    req.on('error', (err) => settle(err));
    if (body === undefined) req.end();
    else if (body instanceof Uint8Array) req.end(body);
    else if (typeof body === 'function')
      body(req).then(
        () => req.end(),
        (err: unknown) => {
          if (!req.writableFinished) settle(err as Error);
        },
      );
    else
      pipeline(Readable.from(body), req).catch((err: unknown) => {
        if (!req.writableFinished) settle(err as Error);
      });
  });
}

/**
 * One request to one host, retried with back-off on network errors, 429 and 5xx. `init` builds
 * the request anew for each attempt (a body can be sent once). Never throws. The body of a 2xx
 * answer is its text (parsed when it is JSON), or with `bytes` the bytes as they came (a listing
 * compared whole with one kept: docs/sync.md "Speed").
 */
export async function request(
  url: string,
  init: () => Promise<RequestInit> | RequestInit,
  settings: RequestSettings = DEFAULT_REQUEST,
  options: { bytes?: boolean } = {},
): Promise<Outcome> {
  const target = new URL(url);
  const origin = target.origin;
  for (let attempt = 0; ; attempt++) {
    let response: Answer;
    try {
      response = await exchange(target, await init(), settings.timeoutMs);
    } catch (err) {
      const reason = describeNetworkError(err, settings.timeoutMs);
      // A file-system error names its path; a network error does not.
      if (typeof (err as { path?: unknown }).path === 'string') {
        return {
          url,
          ok: false,
          error: `cannot read the local file: ${(err as Error).message}`,
          exit: EXIT.failed,
        };
      }
      if (attempt < settings.retry.retries) {
        await sleep(retryDelayMs(attempt + 1, settings.retry));
        continue;
      }
      return { url, ok: false, error: `cannot reach ${origin} (${reason})`, exit: EXIT.failed };
    }
    const ok = response.status >= 200 && response.status < 300;
    if (ok && options.bytes) return { url, ok: true, status: response.status, body: response.bytes, exit: EXIT.ok };
    const text = response.bytes.toString('utf8');
    let body: unknown = text;
    if ((response.headers['content-type'] ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        /* keep the text */
      }
    }
    if (ok) return { url, ok: true, status: response.status, body, exit: EXIT.ok };
    if (isRetryable({ status: response.status }) && attempt < settings.retry.retries) {
      const retryAfter = response.headers['retry-after'];
      await sleep(retryDelayMs(attempt + 1, settings.retry, typeof retryAfter === 'string' ? retryAfter : null));
      continue;
    }
    // Another web server's error page says nothing here, and would fill the screen: it is named, not shown.
    const html = (response.headers['content-type'] ?? '').includes('html') || /^\s*<(!doctype|html)/i.test(text);
    const summary = html ? 'an HTML page: is this an ack host?' : problemSummary(body);
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
