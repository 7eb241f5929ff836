import type { RawRequest, RawResponse } from '../../http/exchange.js';

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
export function countBodyBytes(res: RawResponse): () => number {
  let bytes = 0;
  const size = (chunk: unknown, encoding: unknown) =>
    typeof chunk === 'string'
      ? Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      : chunk instanceof Uint8Array
        ? chunk.byteLength
        : 0;
  const write = res.write;
  const end = res.end;
  // HTTP/2's `end(chunk)` writes the chunk through `this.write` (HTTP/1.1's does not): a chunk
  // counted by `end` is not counted again on its way through `write`.
  let ending = false;
  res.write = function (this: RawResponse, chunk: unknown, ...rest: unknown[]) {
    if (!ending) bytes += size(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as RawResponse['write'];
  res.end = function (this: RawResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') bytes += size(chunk, rest[0]);
    ending = true;
    try {
      return (end as (...a: unknown[]) => RawResponse).call(this, chunk, ...rest);
    } finally {
      ending = false;
    }
  } as RawResponse['end'];
  return () => bytes;
}

export function accessLine(req: RawRequest, res: RawResponse, bodyBytes: number, now: Date = new Date()): string {
  const ms = Number(process.hrtime.bigint() - req.ack.startedAt) / 1e6;
  const bytes = req.method === 'HEAD' || bodyBytes === 0 ? '-' : String(bodyBytes);
  const user = (req as { ackUser?: { UserID?: unknown } }).ackUser?.UserID;
  const who = typeof user === 'string' && user !== '' ? user.replace(/\s/g, '_') : '-';
  return `${req.ack.clientIp || '-'} - ${who} [${combinedDate(now)}] "${req.method} ${req.ack.rawPath} HTTP/${req.httpVersion}" ${res.statusCode} ${bytes} ${quoted(req.headers.referer)} ${quoted(req.headers['user-agent'])} ${ms.toFixed(1)} ms [${req.ack.id}]`;
}

/** A request line as a refused request's packet may start with; anything else is logged as `-`. */
// Visible ASCII only, so the line needs no escaping; the target stops at its query string.
const REQUEST_LINE = /^([A-Z][A-Z0-9_-]{0,31}) ([!->@-~]{1,2048})(?:\?[!-~]*)? (HTTP\/\d(?:\.\d)?)\r?$/;

/**
 * The access line of a request Node's HTTP/1.1 parser refused before the host saw it (a malformed
 * request line, a bad header, headers over the limit; docs/logging.md): the status Node's answer
 * carries, the request line when the refused bytes start with a readable one (without its query
 * string), and `-` for what was never read (user, referrer, user agent, duration).
 */
export function refusedAccessLine(
  clientIp: string,
  packet: Buffer | undefined,
  status: number,
  id: string,
  now: Date = new Date(),
): string {
  const first = packet?.subarray(0, 2200).toString('latin1').split('\n', 1)[0] ?? '';
  const m = REQUEST_LINE.exec(first);
  const request = m ? `${m[1]} ${m[2]} ${m[3]}` : '-';
  return `${clientIp || '-'} - - [${combinedDate(now)}] ${quoted(request)} ${status} - "-" "-" - ms [${id}]`;
}
