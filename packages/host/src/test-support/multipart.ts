import { randomBytes } from 'node:crypto';
import { rawConnection } from './raw-socket.js';

/** One part of a hand-built multipart body: a text field, or a file when `filename` is given. */
export interface FormPart {
  name: string;
  content: string | Buffer;
  filename?: string;
}

/**
 * A `multipart/form-data` body built byte by byte, so that tests (and the fuzz tests) can send
 * what fetch's FormData never would: duplicate or misplaced file parts, a missing closing boundary,
 * a body cut short.
 */
export function multipartBody(
  parts: readonly FormPart[],
  options: { boundary?: string; close?: boolean } = {},
): { body: Buffer; contentType: string; boundary: string } {
  const boundary = options.boundary ?? `ackTest${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"`;
    const type = part.filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`));
    chunks.push(Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content));
    chunks.push(Buffer.from('\r\n'));
  }
  if (options.close !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

/** What a raw POST got back: the status and body of a whole response, or `closed` with no response. */
export interface RawAnswer {
  status: number | 'closed';
  headers: Record<string, string>;
  body: string;
}

/**
 * POSTs `body` over a fresh HTTP/1.1 connection and reads one response. `contentLength` defaults to
 * the body's length (a larger one leaves the body short); `disconnect` closes the socket right after
 * the body instead of waiting for an answer. Resolves within `timeoutMs` with `closed` when no whole
 * response came.
 */
export async function rawPost(
  url: string,
  pathname: string,
  body: Buffer,
  headers: Record<string, string>,
  options: { contentLength?: number; disconnect?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const conn = await rawConnection(url);
  const { host } = new URL(url);
  const head = Object.entries({
    Host: host,
    'Content-Length': String(options.contentLength ?? body.length),
    ...headers,
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  conn.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n`);
  conn.write(body);
  if (options.disconnect) {
    conn.destroy();
    return { status: 'closed', headers: {}, body: '' };
  }
  const whole = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/;
  const complete = (text: string) => {
    const m = whole.exec(text);
    if (!m) return false;
    const length = /\r\ncontent-length: *(\d+)/i.exec(`\r\n${m[2]}`);
    return length ? text.length - m[0].length >= Number(length[1]) : false;
  };
  await new Promise<void>((resolve) => {
    const check = () => {
      if (complete(conn.text)) done();
    };
    const done = () => {
      clearTimeout(timer);
      conn.socket.off('data', check);
      resolve();
    };
    const timer = setTimeout(done, options.timeoutMs ?? 10_000);
    conn.socket.on('data', check);
    void conn.closed.then(done);
    check();
  });
  const text = conn.text;
  conn.destroy();
  const m = whole.exec(text);
  if (!m || !complete(text)) return { status: 'closed', headers: {}, body: '' };
  const parsed: Record<string, string> = {};
  for (const line of m[2]!.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) parsed[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(m[1]), headers: parsed, body: text.slice(m[0].length) };
}
