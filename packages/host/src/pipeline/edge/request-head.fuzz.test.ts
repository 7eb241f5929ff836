import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../../modules/contract.js';
import {
  createTestHome,
  fuzzOptions,
  probeModule,
  rawConnection,
  startTestHost,
  testAppSettings,
  type TestHome,
  type TestHost,
} from '../../test-support/index.js';

// Property-based test of HTTP/1.1 request heads as a broken or hostile client sends them (docs/
// reliability.md "Fuzzing"; ACK_FUZZ_SEED / ACK_FUZZ_RUNS): any method, target and version, header
// names and values with control characters, two Host, Content-Length or Transfer-Encoding
// fields, upgrade offers, heads cut anywhere. Whatever arrives, the host answers without a 5xx or
// closes the connection, within a bounded time, and goes on serving.

/** A module offering a WebSocket, so that upgrade offers reach the host's upgrade handling too. */
const socketModule: AckModuleFactory = () => ({
  upgrades: [{ path: '/live/socket', handler: (socket) => socket.close(1000, 'bye') }],
});

let home: TestHome;
let host: TestHost;

beforeAll(async () => {
  home = createTestHome(
    testAppSettings({
      AppSettings: { LoadModules: ['probe', 'live'], UseHttpLogging: true },
      Serilog: { WriteTo: [] },
    }),
    { 'modules/probe/module.json': { ModuleID: 'probe' }, 'modules/live/module.json': { ModuleID: 'live' } },
  );
  host = await startTestHost(home, { probe: probeModule(), live: socketModule });
});

afterAll(async () => {
  await host.close();
  home.remove();
});

/** Printable ASCII with the control characters (and a few bytes above 127) a hostile client sends. */
const rawText = (maxLength: number) =>
  fc
    .array(
      fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
        { weight: 2, arbitrary: fc.integer({ min: 0x00, max: 0x1f }) },
        { weight: 1, arbitrary: fc.constantFrom(0x7f, 0x80, 0xe9, 0xff) },
      ),
      { maxLength },
    )
    .map((codes) => String.fromCharCode(...codes));

const method = fc.oneof(
  fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'PRI', 'get', ''),
  rawText(12),
);
const target = fc.oneof(
  fc.constantFrom(
    '/',
    '/probe-static',
    '/probe-static?key=1',
    '/live/socket',
    '/probe/json',
    '*',
    'http://127.0.0.1/probe-static',
    'https://other.example:1/x?y',
    '//double',
    '/%zz',
    '/a%00b',
    '/../../etc/passwd',
    '127.0.0.1:80',
  ),
  rawText(40).map((t) => `/${t}`),
  rawText(20),
);
const version = fc.oneof(
  fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'http/1.1', 'HTTP/11', ''),
  rawText(10),
);
const headerName = fc.oneof(
  fc.constantFrom(
    'Host',
    'Content-Length',
    'Transfer-Encoding',
    'Connection',
    'Upgrade',
    'HTTP2-Settings',
    'Sec-WebSocket-Key',
    'Sec-WebSocket-Version',
    'Expect',
    'Origin',
    'Cookie',
    'X-Forwarded-For',
    'Content-Type',
  ),
  rawText(16),
);
const headerValue = fc.oneof(
  fc.constantFrom(
    '127.0.0.1',
    'evil.example',
    '0',
    '5',
    '-1',
    '99999999999999999999',
    ' 3',
    '3, 4',
    'chunked',
    'gzip, chunked',
    'chunked, gzip',
    'identity',
    'Upgrade',
    'Upgrade, HTTP2-Settings',
    'keep-alive',
    'close',
    'h2c',
    'websocket',
    'dGhlIHNhbXBsZSBub25jZQ==',
    '13',
    '100-continue',
    'application/json',
    '',
  ),
  rawText(40),
);

const requestHead = fc.record({
  method,
  target,
  version,
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }),
  /** Sometimes the same field twice or three times (Host, Content-Length, Transfer-Encoding). */
  repeated: fc.array(fc.tuple(fc.constantFrom('Host', 'Content-Length', 'Transfer-Encoding'), headerValue), {
    maxLength: 3,
  }),
  lineEnd: fc.constantFrom('\r\n', '\n', '\r'),
  body: rawText(24),
  /** Where the bytes stop: a fraction of them, or all. */
  cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
});

type RequestHead = typeof requestHead extends fc.Arbitrary<infer T> ? T : never;

function bytesOf(c: RequestHead): Buffer {
  const lines = [`${c.method} ${c.target} ${c.version}`];
  for (const [name, value] of [...c.headers, ...c.repeated]) lines.push(`${name}: ${value}`);
  const whole = Buffer.from(lines.join(c.lineEnd) + c.lineEnd + c.lineEnd + c.body, 'latin1');
  return c.cut === undefined ? whole : whole.subarray(0, Math.floor(whole.length * c.cut));
}

/** How long one connection may take to be answered and closed (the host's time-outs are longer). */
const BOUND_MS = 5_000;

describe('HTTP/1.1 request heads a client may send', () => {
  it('get an answer that is not a 5xx, or a closed connection, in bounded time; the host goes on serving', async () => {
    await fc.assert(
      fc.asyncProperty(requestHead, async (c) => {
        const raw = await rawConnection(host.url);
        try {
          raw.write(bytesOf(c));
          // The client is done: whatever the host read, it must now answer it or close.
          raw.socket.end();
          const closed = await raw.closedWithin(BOUND_MS);
          expect(closed, `connection still open after ${BOUND_MS} ms; received: ${JSON.stringify(raw.text)}`).toBe(
            true,
          );
          const statuses = [...raw.text.matchAll(/^HTTP\/1\.[01] (\d{3})/gm)].map((m) => Number(m[1]));
          expect(
            statuses.filter((s) => s >= 500),
            JSON.stringify(raw.text),
          ).toEqual([]);
        } finally {
          raw.destroy();
        }
        const alive = await fetch(`${host.url}/probe-static`);
        expect(alive.status).toBe(200);
        await alive.arrayBuffer();
      }),
      fuzzOptions(200),
    );
  });
});
