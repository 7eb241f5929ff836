import { createHash } from 'node:crypto';
import http from 'node:http';
import { beforeEach, describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from './index.js';

/**
 * `Kestrel:Limits:MaxRequestBodySize` on every route family that reads a body: a body of exactly
 * the limit is read, one byte more is 413 `request.body_too_large`, whether the length is declared
 * or the body is chunked (docs/pipeline.md "Request bodies").
 */
const LIMIT = 3000;
const TOKEN = 'team-token';
const HOST_KEY = 'team-host-key';
const hosts = useTestHosts();
let running: TestHost;

beforeEach(async () => {
  const home = hosts.home(
    testAppSettings({
      AppSettings: {
        LoadModules: ['wwwroot'],
        RunningEnvironment: 'D',
        IsEnabledDevAutoSignIn: true,
        UseContractSync: true,
        HostAccessID: HOST_KEY,
      },
      Kestrel: { Limits: { MaxRequestBodySize: LIMIT } },
    }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledHtmxSample: true },
      },
    },
  );
  running = await hosts.start(home, { wwwroot: wwwrootModule });
});

interface Reply {
  status: number;
  code?: string;
}

/** Sends `body` with a Content-Length, or chunked (no length, sent in three pieces). */
function post(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  chunked: boolean,
  method = 'POST',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${running.url}${path}`,
      { method, headers: chunked ? headers : { ...headers, 'Content-Length': String(body.length) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { code?: string }).code;
          } catch {
            code = undefined;
          }
          resolve({ status: res.statusCode!, code });
        });
      },
    );
    req.on('error', reject);
    const third = Math.floor(body.length / 3);
    req.write(body.subarray(0, third));
    req.write(body.subarray(third, 2 * third));
    req.end(body.subarray(2 * third));
  });
}

/** JSON padded with spaces to `size` bytes. */
const json = (value: object, size: number) => {
  const text = JSON.stringify(value);
  return Buffer.from(text + ' '.repeat(size - text.length));
};
/** A form padded by one extra field to `size` bytes. */
const form = (fields: string, size: number) => Buffer.from(`${fields}&pad=${'p'.repeat(size - fields.length - 5)}`);
/** A multipart form whose file part is padded so that the whole body is `size` bytes. */
function multipart(fields: Record<string, string>, size: number): { body: Buffer; type: string } {
  const b = 'limitboundary';
  const head =
    Object.entries(fields)
      .map(([n, v]) => `--${b}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
      .join('') + `--${b}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n\r\n`;
  const tail = `\r\n--${b}--\r\n`;
  return {
    body: Buffer.from(head + 'f'.repeat(size - head.length - tail.length) + tail),
    type: `multipart/form-data; boundary=${b}`,
  };
}

const JSON_TYPE = { 'Content-Type': 'application/json', Accept: 'application/json' };
const FORM_TYPE = { 'Content-Type': 'application/x-www-form-urlencoded' };
const families: Array<{
  name: string;
  path: string;
  /** POST unless said. */
  method?: string;
  request(size: number): { headers: Record<string, string>; body: Buffer };
  atLimit: number;
}> = [
  {
    name: 'sync upload',
    path: '/wwwroot/api/sync/upload',
    request(size) {
      const { body, type } = multipart(
        { moduleName: 'wwwroot', changeType: 'Created', filePath: `HDS/limit-${size}.txt` },
        size,
      );
      return {
        headers: { 'Content-Type': type, Authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
        body,
      };
    },
    atLimit: 200,
  },
  {
    // The raw reader: the body is the file, no form around it.
    name: 'sync upload (the file as the whole body)',
    path: '/wwwroot/api/sync/upload?moduleName=wwwroot&changeType=Created&filePath=HDS/raw-limit.txt',
    method: 'PUT',
    request: (size) => ({
      headers: { Authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
      body: Buffer.alloc(size, 'r'),
    }),
    atLimit: 200,
  },
  {
    name: 'contract sync',
    path: '/contractsync',
    request(size) {
      const { body, type } = multipart(
        { moduleID: 'HDS', contractType: 'transact', destFilePath: `HDS/limit-${size}.json`, changeType: 'Created' },
        size,
      );
      return {
        headers: { 'Content-Type': type, hostAccessID: createHash('sha256').update(HOST_KEY).digest('hex') },
        body,
      };
    },
    atLimit: 200,
  },
  {
    name: 'dev sign-in',
    path: '/wwwroot/api/dev-account/sign-in',
    request: (size) => ({ headers: JSON_TYPE, body: json({ UserID: 'dev' }, size) }),
    atLimit: 200,
  },
  {
    name: 'index API (JSON)',
    path: '/wwwroot/api/index/create-id',
    request: (size) => ({
      headers: { ...JSON_TYPE, Origin: 'http://localhost:8421' },
      body: json({ fromMinutes: 5 }, size),
    }),
    atLimit: 200,
  },
  {
    name: 'index API (form)',
    path: '/wwwroot/api/index/validate-token',
    request: (size) => ({ headers: FORM_TYPE, body: form('x=1', size) }),
    atLimit: 400,
  },
  {
    name: 'htmx form',
    path: '/wwwroot/api/htmx/contacts',
    request: (size) => ({
      headers: { ...FORM_TYPE, 'HX-Request': 'true' },
      body: form('name=Ann&email=ann%40example.com&phone=555', size),
    }),
    atLimit: 201,
  },
];

describe('Kestrel:Limits:MaxRequestBodySize at its boundary', () => {
  for (const family of families) {
    for (const chunked of [false, true]) {
      it(`${family.name}, ${chunked ? 'chunked' : 'with Content-Length'}: the limit is read, one byte more is 413`, async () => {
        const at = family.request(LIMIT);
        expect(at.body.length).toBe(LIMIT);
        const ok = await post(family.path, at.headers, at.body, chunked, family.method);
        expect(ok.code).not.toBe('request.body_too_large');
        expect(ok.status).toBe(family.atLimit);

        const over = family.request(LIMIT + 1);
        expect(over.body.length).toBe(LIMIT + 1);
        const refused = await post(family.path, over.headers, over.body, chunked, family.method);
        expect(refused).toEqual({ status: 413, code: 'request.body_too_large' });
      });
    }
  }
});

describe('a chunked body past the limit', () => {
  for (const family of families) {
    it(`${family.name}: is refused the moment the limit is passed, before the body ends, and the connection closes`, async () => {
      const { headers, body } = family.request(LIMIT + 1);
      const reply = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        const req = http.request(
          `${running.url}${family.path}`,
          { method: family.method ?? 'POST', headers },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode!, connection: res.headers.connection });
            req.destroy();
          },
        );
        req.on('error', reject);
        req.write(body); // and never ends the body
      });
      // The rest of the body is never read: the connection cannot carry another request.
      expect(reply).toEqual({ status: 413, connection: 'close' });
    });
  }
});
