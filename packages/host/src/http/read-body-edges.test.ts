import crypto from 'node:crypto';
import express from 'express';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { rawConnection, testAppSettings, useTestHosts } from '../test-support/index.js';

// The host's body readers at their edges (docs/pipeline.md "Request bodies"), over real sockets:
// every encoding and media type a client may send, the limits at their exact boundary, and the
// connection closed after a refusal so that the rest of a large body is never read.
const hosts = useTestHosts();

const bodies: AckModuleFactory = (ctx) => {
  const router = express.Router();
  const echo: express.RequestHandler = (req, res) => res.json({ body: req.body as unknown });
  router.post('/json', ctx.host.bodies.json('probe', 16), echo);
  router.post('/optional', ctx.host.bodies.optionalJson(16), echo);
  router.post('/optional-default', ctx.host.bodies.optionalJson(), (req, res) =>
    res.json({ length: JSON.stringify(req.body).length }),
  );
  router.post('/big', ctx.host.bodies.json('big', 8 * 1024 * 1024), (req, res) =>
    res.json({ length: (req.body as { a: string }).a.length }),
  );
  router.post('/form', ctx.host.bodies.form(64, 3), echo);
  router.post('/form-default', ctx.host.bodies.form(), echo);
  return { routes: [{ mount: '/bodies/api', handler: router }] };
};

async function start(maxRequestBodySize: number | null = null) {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['bodies'] },
      Kestrel: { Limits: { MaxRequestBodySize: maxRequestBodySize } },
    }),
    { 'modules/bodies/module.json': { ModuleID: 'bodies' } },
  );
  const { url } = await hosts.start(home, { bodies });
  const post = async (route: string, body: string | Buffer, headers: Record<string, string> = {}) => {
    // A body the host stops reading fails the test within 10 s rather than at its time limit.
    const res = await fetch(`${url}/bodies/api/${route}`, {
      method: 'POST',
      body,
      headers,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, json: (await res.json()) as { body?: unknown; code?: string; detail?: string } };
  };
  return { url, post };
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('JSON bodies', () => {
  it('reads deflate, and names its encoding in any case and with spaces', async () => {
    const { post } = await start();
    const text = '{"a":1}';
    expect(await post('json', zlib.deflateSync(text), { ...JSON_TYPE, 'content-encoding': 'deflate' })).toEqual({
      status: 200,
      json: { body: { a: 1 } },
    });
    expect((await post('json', zlib.gzipSync(text), { ...JSON_TYPE, 'content-encoding': ' GZIP ' })).json).toEqual({
      body: { a: 1 },
    });
    expect((await post('json', text, { ...JSON_TYPE, 'content-encoding': 'identity' })).json).toEqual({
      body: { a: 1 },
    });
  });

  it('accepts exactly the route limit of decoded bytes and refuses one more', async () => {
    const { post } = await start();
    const sized = (n: number) => `{"a":"${'x'.repeat(n - 8)}"}`;
    expect(sized(16)).toHaveLength(16);
    expect(await post('json', sized(16), JSON_TYPE)).toEqual({ status: 200, json: { body: { a: 'x'.repeat(8) } } });
    expect(await post('json', sized(17), JSON_TYPE)).toMatchObject({
      status: 413,
      json: { code: 'request.entity_too_large' },
    });
  });

  it('takes an empty body as {}, arrays as they are, and refuses other media types with 415', async () => {
    const { post } = await start();
    expect(await post('json', '  ', JSON_TYPE)).toEqual({ status: 200, json: { body: {} } });
    expect(await post('json', '[1,2]', JSON_TYPE)).toEqual({ status: 200, json: { body: [1, 2] } });
    expect(await post('json', '{"a":', JSON_TYPE)).toMatchObject({
      status: 400,
      json: { code: 'request.entity_parse_failed' },
    });
    expect(await post('json', '{}', { 'content-type': 'text/plain' })).toMatchObject({
      status: 415,
      json: { code: 'probe.unsupported_media_type' },
    });
    expect(
      await post('json', Buffer.from('{"a":"é"}', 'latin1'), { 'content-type': 'application/json; charset=latin1' }),
    ).toEqual({
      status: 200,
      json: { body: { a: 'é' } },
    });
  });

  it('optionalJson reads JSON within its limit and leaves any other body unread', async () => {
    const { post } = await start();
    expect(await post('optional', '{"a":1}', JSON_TYPE)).toEqual({ status: 200, json: { body: { a: 1 } } });
    expect(await post('optional', 'a=1', { 'content-type': 'text/plain' })).toEqual({ status: 200, json: {} });
    expect((await post('optional', '{"a":"1234567890123"}', JSON_TYPE)).status).toBe(413);
  });
});

describe('form bodies', () => {
  it('reads names to strings or lists, within the field and byte limits', async () => {
    const { post } = await start();
    const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(await post('form', 'a=1&b=2&a=3', FORM)).toEqual({ status: 200, json: { body: { a: ['1', '3'], b: '2' } } });
    expect(await post('form', 'a=1&b=2&c=3&d=4', FORM)).toMatchObject({
      status: 413,
      json: { code: 'request.parameters_too_many' },
    });
    expect((await post('form', `a=${'x'.repeat(62)}`, FORM)).status).toBe(200); // 64 bytes
    expect((await post('form', `a=${'x'.repeat(63)}`, FORM)).status).toBe(413);
    expect(await post('form', '{"a":1}', JSON_TYPE)).toEqual({ status: 200, json: {} }); // not a form: unread
    expect((await post('form-default', `a=${'x'.repeat(16 * 1024 - 2)}`, FORM)).status).toBe(200);
    expect((await post('form-default', `a=${'x'.repeat(16 * 1024 - 1)}`, FORM)).status).toBe(413);
  });
});

describe('a refusal before the body ends', () => {
  it('answers 413 at once and closes the connection instead of reading the rest', async () => {
    const { url } = await start();
    const c = await rawConnection(url);
    c.write(
      'POST /bodies/api/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n' +
        '{"a":"' +
        'x'.repeat(100),
    );
    const reply = await c.until(/\r\n\r\n\{[^}]*\}/);
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    expect(await c.closedWithin(10_000)).toBe(true);
  });

  it('keeps the connection for a refusal after the whole body was read', async () => {
    const { url } = await start();
    const c = await rawConnection(url);
    c.write(
      'POST /bodies/api/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}',
    );
    const reply = await c.until(/\r\n\r\n\{[^}]*\}/);
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).not.toMatch(/Connection: close/i);
    c.destroy();
  });

  it('answers 400 request.aborted to nobody when the client goes away mid-body, and stays up', async () => {
    const { url, post } = await start();
    const c = await rawConnection(url);
    c.write(
      'POST /bodies/api/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a"',
    );
    c.destroy();
    expect((await post('json', '{"a":1}', JSON_TYPE)).status).toBe(200);
  });
});

describe('what a refusal says', () => {
  it('names the limit, the encoding, the charset or the media type in its detail', async () => {
    const { post } = await start();
    const detail = async (route: string, body: string | Buffer, headers: Record<string, string>) =>
      (await post(route, body, headers)).json.detail;
    expect(await detail('json', '{"a":"123456789"}', JSON_TYPE)).toBe('The request body is over 16 bytes.');
    expect(await detail('json', '{}', { ...JSON_TYPE, 'content-encoding': 'zstd' })).toBe(
      'The content encoding "zstd" is not supported.',
    );
    expect(await detail('json', '{}', { ...JSON_TYPE, 'content-encoding': 'gzip' })).toBe(
      'The request body could not be decoded.',
    );
    expect(await detail('json', '{}', { 'content-type': 'application/json; charset=x-nope' })).toBe(
      'The charset "x-nope" is not supported.',
    );
    expect(await detail('json', '"text"', JSON_TYPE)).toBe('The JSON body must be an object or an array.');
    expect(await detail('json', '{"a":', JSON_TYPE)).toMatch(/^The JSON body is not valid: /);
    expect(await detail('json', '{}', { 'content-type': 'text/plain' })).toBe(
      'Send the body as Content-Type: application/json.',
    );
    expect(await detail('form', 'a=1&b=2&c=3&d=4', { 'content-type': 'application/x-www-form-urlencoded' })).toBe(
      'The form has more than 3 fields.',
    );
  });

  it('names MaxRequestBodySize in the 413 for a chunked body past it', async () => {
    const { url } = await start(64);
    const c = await rawConnection(url);
    c.write(
      'POST /bodies/api/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
        `41\r\n{"a":"${'x'.repeat(59)}\r\n`,
    );
    const reply = await c.until(/\r\n\r\n\{[^}]*\}/);
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('"code":"request.body_too_large"');
    expect(reply).toContain('The request body is over 64 bytes (Kestrel:Limits:MaxRequestBodySize).');
    c.destroy();
  });
});

describe('charsets and large encoded bodies', () => {
  it('reads the charset parameter however it is spaced', async () => {
    const { post } = await start();
    const latin1 = Buffer.from('{"a":"é"}', 'latin1');
    for (const type of ['application/json;charset=latin1', 'application/json; charset = "latin1"'])
      expect(await post('json', latin1, { 'content-type': type }), type).toEqual({
        status: 200,
        json: { body: { a: 'é' } },
      });
  });

  it('reads a large gzip body whose decoding outpaces the socket (back-pressure), whole', async () => {
    const { post } = await start();
    const text = crypto.randomBytes(3 * 1024 * 1024).toString('base64');
    const res = await post('big', zlib.gzipSync(JSON.stringify({ a: text })), {
      ...JSON_TYPE,
      'content-encoding': 'gzip',
    });
    expect(res).toEqual({ status: 200, json: { length: text.length } });
  });

  it('optionalJson reads up to 64 KiB by default', async () => {
    const { post } = await start();
    const sized = (n: number) => `{"a":"${'x'.repeat(n - 8)}"}`;
    expect(await post('optional-default', sized(64 * 1024), JSON_TYPE)).toEqual({
      status: 200,
      json: { length: 64 * 1024 },
    });
    expect((await post('optional-default', sized(64 * 1024 + 1), JSON_TYPE)).status).toBe(413);
  });
});
