import http from 'node:http';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, testAppSettings, useTestHosts } from '../test-support/index.js';

const hosts = useTestHosts();

async function start(maxRequestBodySize: number | null = null): Promise<string> {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['probe'] },
      Kestrel: { Limits: { MaxRequestBodySize: maxRequestBodySize } },
    }),
    moduleFiles(['probe']),
  );
  return (await hosts.start(home, { probe: probeModule() })).url;
}

/** POSTs to the probe's JSON route (the host's body reader, 1 MiB), optionally chunked. */
function postJson(
  url: string,
  body: Buffer,
  headers: Record<string, string> = {},
  chunked = false,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/probe/api/json`,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...headers,
          ...(chunked ? {} : { 'Content-Length': String(body.length) }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the host body reader', () => {
  it('reads JSON as sent, chunked, and gzip- or br-encoded', async () => {
    const url = await start();
    const json = Buffer.from(JSON.stringify({ a: 'é'.repeat(100) }));
    for (const [headers, body] of [
      [{}, json],
      [{ 'Content-Encoding': 'gzip' }, zlib.gzipSync(json)],
      [{ 'Content-Encoding': 'br' }, zlib.brotliCompressSync(json)],
    ] as const) {
      for (const chunked of [false, true]) {
        const res = await postJson(url, body, headers, chunked);
        expect(res, JSON.stringify(headers)).toEqual({ status: 200, body: { received: { a: 'é'.repeat(100) } } });
      }
    }
  });

  it('refuses what it cannot read with a 4xx naming why', async () => {
    const url = await start();
    expect(await postJson(url, Buffer.from('"a string"'))).toMatchObject({
      status: 400,
      body: { code: 'request.entity_parse_failed' },
    });
    expect(await postJson(url, Buffer.from('{}'), { 'Content-Encoding': 'compress' })).toMatchObject({
      status: 415,
      body: { code: 'request.encoding_unsupported' },
    });
    expect(await postJson(url, Buffer.from('{}'), { 'Content-Encoding': 'gzip' })).toMatchObject({
      status: 400,
      body: { code: 'request.bad_encoding' },
    });
    expect(
      await postJson(url, Buffer.from('{}'), { 'Content-Type': 'application/json; charset=x-unknown' }),
    ).toMatchObject({ status: 415, body: { code: 'request.charset_unsupported' } });
  });

  it("counts the route's own limit on the decoded body: a small gzip body that inflates past it is 413", async () => {
    const url = await start();
    const inflated = Buffer.from(JSON.stringify({ a: 'x'.repeat(1024 * 1024) }));
    const gz = zlib.gzipSync(inflated);
    expect(gz.length).toBeLessThan(10_000);
    expect(await postJson(url, gz, { 'Content-Encoding': 'gzip' }, true)).toMatchObject({
      status: 413,
      body: { code: 'request.entity_too_large' },
    });
  });

  it('counts MaxRequestBodySize on the bytes as sent, chunked included', async () => {
    const url = await start(1024);
    const body = (size: number) => Buffer.from(`{"a":"${'x'.repeat(size - 8)}"}`);
    expect(body(1024).length).toBe(1024);
    expect((await postJson(url, body(1024), {}, true)).status).toBe(200);
    expect(await postJson(url, body(1025), {}, true)).toMatchObject({
      status: 413,
      body: { code: 'request.body_too_large' },
    });
  });
});
