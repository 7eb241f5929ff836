import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '@ack/host';
import { createTestHome, startTestHost, testAppSettings, type TestHome, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from './index.js';
import { basicAuth } from './test-support/test-fixture.js';

// The caller's W3C trace passed on by the host's outgoing calls while no span is exported (no
// OTEL_* variables; docs/operations.md "Traces"): the transaction wrapper's call to the business
// server and a module refresh through its route carry the caller's `traceparent` and `tracestate`
// unchanged; a malformed `traceparent` is not passed on, nor the `tracestate` beside it.

const KEY = 'trace-module-key';
const TOKEN = 'trace-sync-token';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${PARENT}-01`;

type Seen = { traceparent?: string; tracestate?: string };
const headersOf = (req: http.IncomingMessage): Seen => ({
  traceparent: req.headers.traceparent as string | undefined,
  tracestate: req.headers.tracestate as string | undefined,
});

const business: Seen[] = [];
const refreshes: Seen[] = [];
let businessServer: http.Server;
let url: string;
let home: TestHome;
let host: TestHost;

/** A module with the original's refresh route and no in-process hook: refresh calls it over HTTP. */
const transactModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/transaction/refresh', (req, res) => {
    refreshes.push(headersOf(req));
    res.json(true);
  });
  return { routes: [{ mount: '/transact/api', handler: router }] };
};

beforeAll(async () => {
  businessServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      business.push(headersOf(req));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ acknowledge: 1, result: { dataSet: [{ id: 'FormData0', value: { Ok: true } }] } }));
    });
  });
  await new Promise<void>((r) => businessServer.listen(0, '127.0.0.1', () => r()));
  const port = (businessServer.address() as AddressInfo).port;
  home = createTestHome(testAppSettings({ AppSettings: { LoadModules: ['wwwroot', 'transact'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: {
        BusinessServerUrl: `http://127.0.0.1:${port}/transact/api/transaction/execute`,
        AuthorizationKey: KEY,
        FileSyncTokens: [TOKEN],
      },
    },
    'modules/transact/module.json': { ModuleID: 'transact' },
  });
  host = await startTestHost(home, { wwwroot: wwwrootModule, transact: transactModule });
  url = host.url;
});
afterAll(async () => {
  await host.close();
  home.remove();
  businessServer.closeAllConnections();
  await new Promise<void>((r) => businessServer.close(() => r()));
});

async function transaction(headers: Record<string, string>): Promise<Seen> {
  const res = await fetch(`${url}/wwwroot/api/index/transaction`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', AuthorizationKey: KEY, ...headers },
    body: JSON.stringify({ commandID: 'HDS|ZZW|TST010|GD01', inputs: [{ Name: 'Kim' }] }),
  });
  expect(res.status).toBe(200);
  return business.at(-1)!;
}

describe('trace headers on outgoing calls, without span export', () => {
  it('the business server gets the caller traceparent and tracestate as they came', async () => {
    expect(await transaction({ traceparent: VALID, tracestate: 'congo=t61rcWkgMzE' })).toEqual({
      traceparent: VALID,
      tracestate: 'congo=t61rcWkgMzE',
    });
    // Unsampled stays unsampled.
    expect((await transaction({ traceparent: `00-${TRACE}-${PARENT}-00` })).traceparent).toBe(
      `00-${TRACE}-${PARENT}-00`,
    );
  });

  it('a later version is passed on as version 00 with the same ids; version ff is not passed on', async () => {
    expect((await transaction({ traceparent: `01-${TRACE}-${PARENT}-01-more` })).traceparent).toBe(VALID);
    expect((await transaction({ traceparent: `ff-${TRACE}-${PARENT}-01` })).traceparent).toBeUndefined();
  });

  it.each([
    ['one character short', VALID.slice(0, -1)],
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
  ])('a traceparent with %s is not passed on, nor its tracestate', async (_case, traceparent) => {
    expect(await transaction({ traceparent, tracestate: 'congo=t61rcWkgMzE' })).toEqual({
      traceparent: undefined,
      tracestate: undefined,
    });
  });

  it('without a traceparent, the call carries none', async () => {
    expect(await transaction({})).toEqual({ traceparent: undefined, tracestate: undefined });
  });

  it("a module refresh through its route carries the upload's trace", async () => {
    const res = await fetch(
      `${url}/wwwroot/api/sync/refresh?moduleName=transact&changeType=Changed&filePath=HDS/ZZW/TST010.json`,
      { headers: { Authorization: basicAuth(TOKEN), traceparent: VALID, tracestate: 'rojo=1' } },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toBe(true); // the route's own answer, relayed
    expect(refreshes.at(-1)).toEqual({ traceparent: VALID, tracestate: 'rojo=1' });
  });
});
