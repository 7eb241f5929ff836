import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { makeSelfSignedCertificate } from '../lifecycle/dev-cert.js';

/**
 * Test support for TLS and HTTP/2: certificates made with the openssl command, and three real
 * clients that answer in one shape: Node's http2 client, `curl --http2` and Node's https (HTTP/1.1).
 */

/** A self-signed certificate for localhost and 127.0.0.1 in `dir`: `<name>.crt`, `<name>.key` and `<name>.pfx` (password `cert-pass`). */
export function makeTestCertificate(
  dir: string,
  name = 'dev',
  commonName = 'localhost',
): { cert: string; key: string; pfx: string } {
  const files = {
    cert: path.join(dir, `${name}.crt`),
    key: path.join(dir, `${name}.key`),
    pfx: path.join(dir, `${name}.pfx`),
  };
  fs.mkdirSync(dir, { recursive: true });
  makeSelfSignedCertificate({
    cert: files.cert,
    key: files.key,
    subject: `/CN=${commonName}`,
    names: ['DNS:localhost', 'IP:127.0.0.1'],
    days: 2,
  });
  execFileSync(
    'openssl',
    ['pkcs12', '-export', '-in', files.cert, '-inkey', files.key, '-out', files.pfx, '-passout', 'pass:cert-pass'],
    { stdio: 'ignore' },
  );
  return files;
}

export interface Reply {
  /** `2` or `1.1`: the protocol the answer came over. */
  version: string;
  status: number;
  /** Lower-case names; repeated headers (Set-Cookie) joined with `\n`. */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

export interface Send {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export type Client = (request: Send) => Promise<Reply>;

function reply(
  version: string,
  status: number,
  raw: Record<string, string | string[] | number | undefined>,
  body: Buffer,
): Reply {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (name.startsWith(':') || value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join('\n') : String(value);
  }
  return { version, status, headers, body, text: body.toString('utf8') };
}

/**
 * Node's http2 client over one connection (as a browser keeps one). A body is written as a stream
 * without `Content-Length`, as HTTP/2 allows (unless the caller sets one). `options` go to
 * `http2.connect` (e.g. a small `settings.initialWindowSize` for a slow reader).
 */
export function nodeHttp2Client(
  baseUrl: string,
  options: http2.SecureClientSessionOptions = {},
): {
  send: Client;
  session: http2.ClientHttp2Session;
  close(): Promise<void>;
} {
  const session = http2.connect(baseUrl, { rejectUnauthorized: false, ...options });
  session.on('error', () => {});
  const send: Client = (request) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': request.method ?? 'GET', ':path': request.path, ...request.headers });
      const chunks: Buffer[] = [];
      let head: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader = {};
      stream.on('response', (h) => (head = h));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve(reply('2', Number(head[':status']), head, Buffer.concat(chunks))));
      stream.on('error', reject);
      stream.end(request.body);
    });
  const close = () =>
    new Promise<void>((resolve) => {
      if (session.destroyed) return resolve();
      session.once('close', () => resolve());
      session.close();
    });
  return { send, session, close };
}

/**
 * `curl --http2` (curl built with nghttp2), one process per request; `--http1.1` with `http1`.
 * `connectTo` (`host:port:address`, curl's --resolve) sends SNI for a name while connecting to an address.
 */
export function curlClient(
  baseUrl: string,
  options: { http1?: boolean; http2PriorKnowledge?: boolean; connectTo?: string } = {},
): Client {
  return async (request) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-curl-'));
    try {
      const args = [
        '-sk',
        '--max-time',
        '30',
        options.http1 ? '--http1.1' : options.http2PriorKnowledge ? '--http2-prior-knowledge' : '--http2',
        '-X',
        request.method ?? 'GET',
        '-D',
        path.join(dir, 'head'),
        '-o',
        path.join(dir, 'body'),
        '-w',
        '%{http_version}',
      ];
      if (options.connectTo) args.push('--resolve', options.connectTo);
      for (const [name, value] of Object.entries(request.headers ?? {})) args.push('-H', `${name}: ${value}`);
      if (request.body !== undefined) {
        fs.writeFileSync(path.join(dir, 'data'), request.body);
        args.push('--data-binary', `@${path.join(dir, 'data')}`);
      }
      args.push(baseUrl + request.path);
      const version = await new Promise<string>((resolve, reject) =>
        execFile('curl', args, (err, stdout, stderr) =>
          err ? reject(new Error(`curl failed: ${stderr || err.message}`)) : resolve(stdout.trim()),
        ),
      );
      const lines = fs.readFileSync(path.join(dir, 'head'), 'latin1').split(/\r?\n/);
      // The last response block (after any 100 Continue).
      const start =
        lines
          .map((l, i) => (/^HTTP\//.test(l) ? i : -1))
          .filter((i) => i >= 0)
          .pop() ?? 0;
      const status = Number(lines[start]!.split(' ')[1]);
      const raw: Record<string, string[]> = {};
      for (const line of lines.slice(start + 1)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        (raw[line.slice(0, colon).toLowerCase()] ??= []).push(line.slice(colon + 1).trim());
      }
      // curl writes no body file for an answer without a body (a 304, for one).
      const body = path.join(dir, 'body');
      return reply(version, status, raw, fs.existsSync(body) ? fs.readFileSync(body) : Buffer.alloc(0));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** Node's https module: HTTP/1.1 over TLS (ALPN `http/1.1`), a new connection per request. */
export function https1Client(baseUrl: string): Client {
  return (request) =>
    new Promise((resolve, reject) => {
      const req = https.request(
        baseUrl + request.path,
        { method: request.method ?? 'GET', headers: request.headers, rejectUnauthorized: false, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(reply(res.httpVersion, res.statusCode ?? 0, res.headers, Buffer.concat(chunks))));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(request.body);
    });
}

/** A `multipart/form-data` body: fields, then files, in order. */
export function multipart(
  fields: Record<string, string>,
  files: Record<string, { name: string; content: Buffer | string }> = {},
): { body: Buffer; contentType: string } {
  const boundary = `----ack${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const [field, file] of Object.entries(files)) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    parts.push(Buffer.from(file.content), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Headers RFC 9113 8.2.2 forbids in an HTTP/2 response. */
export const CONNECTION_SPECIFIC_HEADERS = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
];
