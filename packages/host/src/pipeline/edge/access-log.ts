import type { ServerResponse } from 'node:http';
import type { AckRequest } from '../../modules/contract.js';

// The access line (docs/logging.md): Apache's "combined" format, so that log tools read it, with the
// duration and the request id added at the end:
//   127.0.0.1 - alice [23/Nov/2026:10:12:01 +0000] "GET /view/a.html HTTP/1.1" 200 1432 "http://x/" "Mozilla/5.0 ..." 0.8 ms [m1x2-3]
// The query string is left out (it may carry keys); quotes and backslashes in the referrer and the
// user agent are escaped, control characters are escaped by the log templates.

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number, width = 2) => String(Math.trunc(Math.abs(n))).padStart(width, '0');

/** `23/Nov/2026:10:12:01 +0100`: local time with its offset, as Apache writes it. */
export function combinedDate(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${pad(date.getDate())}/${MONTHS[date.getMonth()]}/${date.getFullYear()}:${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())} ${sign}${pad(offset / 60)}${pad(offset % 60)}`;
}

const quoted = (value: string | string[] | undefined) => {
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text ? `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : '"-"';
};

/**
 * Counts the body bytes a response writes (streamed or not, with or without Content-Length), so
 * the access line shows what was sent. Only installed when access lines are on.
 */
export function countBodyBytes(res: ServerResponse): () => number {
  let bytes = 0;
  const size = (chunk: unknown, encoding: unknown) =>
    typeof chunk === 'string'
      ? Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      : chunk instanceof Uint8Array
        ? chunk.byteLength
        : 0;
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    bytes += size(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') bytes += size(chunk, rest[0]);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as ServerResponse['end'];
  return () => bytes;
}

export function accessLine(req: AckRequest, res: ServerResponse, bodyBytes: number, now: Date = new Date()): string {
  const ms = Number(process.hrtime.bigint() - req.ack.startedAt) / 1e6;
  const bytes = req.method === 'HEAD' || bodyBytes === 0 ? '-' : String(bodyBytes);
  const user = (req as { ackUser?: { UserID?: unknown } }).ackUser?.UserID;
  const who = typeof user === 'string' && user !== '' ? user.replace(/\s/g, '_') : '-';
  return `${req.ack.clientIp || '-'} - ${who} [${combinedDate(now)}] "${req.method} ${req.ack.rawPath} HTTP/${req.httpVersion}" ${res.statusCode} ${bytes} ${quoted(req.headers.referer)} ${quoted(req.headers['user-agent'])} ${ms.toFixed(1)} ms [${req.ack.id}]`;
}
