import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, nodeHttp2Client, useTestHosts } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// Traces as a user turns them on (docs/operations.md "Traces"): `ack serve` with the standard
// OTEL_* variables, a real OTLP/HTTP receiver and a real business server behind the transaction
// wrapper. One trace id from the caller's `traceparent` through the host's server span, its client
// span and the business server, and on the access line.

const hosts = useTestHosts();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KEY = 'traces-module-key';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  traceState?: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number | string } }>;
}
const SERVER = 2;
const CLIENT = 3;

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}
function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** An OTLP/HTTP receiver (JSON): every span posted to /v1/traces, with its resource's service name. */
async function startReceiver() {
  const spans: Array<OtlpSpan & { service: string }> = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as {
        resourceSpans: Array<{
          resource: { attributes: OtlpSpan['attributes'] };
          scopeSpans: Array<{ spans: OtlpSpan[] }>;
        }>;
      };
      for (const rs of parsed.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of waiters.splice(0)) w();
    });
  });
  const url = await listen(server);
  cleanups.push(() => closeServer(server));
  /** Waits (bounded) until spans matching `test` have come. */
  const waitFor = async (test: (all: typeof spans) => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!test(spans)) {
      if (Date.now() > deadline) throw new Error(`no ${what} within 15 s; received: ${JSON.stringify(spans)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return { url, spans, waitFor };
}

/** The business server behind `BusinessServerUrl`: records the trace headers of each call. */
async function startBusinessServer() {
  const seen: Array<{ traceparent?: string; tracestate?: string }> = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({
        traceparent: req.headers.traceparent as string | undefined,
        tracestate: req.headers.tracestate as string | undefined,
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ acknowledge: 1, result: { dataSet: [{ id: 'FormData0', value: { Ok: true } }] } }));
    });
  });
  const url = await listen(server);
  cleanups.push(() => closeServer(server));
  return { url: `${url}/transact/api/transaction/execute`, seen };
}

async function serveTraced(receiverUrl: string, businessUrl: string, h2cPort: number): Promise<ServingAck> {
  const home = hosts.home(
    {
      AppSettings: { LoadModules: ['wwwroot'], UseHttpLogging: true },
      Kestrel: { Endpoints: { Cleartext: { Url: `http://127.0.0.1:${h2cPort}`, Protocols: 'Http2' } } },
      Serilog: { WriteTo: [{ Name: 'Console', Args: { outputTemplate: '{Message:lj} {Properties:j}{NewLine}' } }] },
    },
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { BusinessServerUrl: businessUrl, AuthorizationKey: KEY },
      },
      'modules/wwwroot/wwwroot/hello.txt': 'hello',
    },
  );
  const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1'], {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiverUrl}/v1/traces`,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'ack-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  cleanups.push(async () => {
    if (served.child.exitCode === null && served.child.signalCode === null) {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });
  return served;
}

const transaction = (url: string, headers: Record<string, string>) =>
  fetch(`${url}/wwwroot/api/index/transaction`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', AuthorizationKey: KEY, ...headers },
    body: JSON.stringify({ commandID: 'HDS|ZZW|TST010|GD01', inputs: [{ Name: 'Kim' }] }),
  });

const attribute = (span: OtlpSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

describe('ack serve with OTEL_* traces', () => {
  it('exports the server span and the outgoing call span under the caller trace id, which the business server and the access line see', async () => {
    const receiver = await startReceiver();
    const business = await startBusinessServer();
    const served = await serveTraced(receiver.url, business.url, await freePort());

    const res = await transaction(served.url, {
      traceparent: `00-${TRACE}-${PARENT}-01`,
      tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
    });
    expect(res.status, served.output()).toBe(200);
    expect(await res.json()).toEqual({ FormData0: { Ok: true } });

    // The business server: the same trace, a new parent (the host's client span), the caller's tracestate.
    expect(business.seen).toHaveLength(1);
    const sent = business.seen[0]!;
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent.traceparent ?? '');
    expect(m, sent.traceparent).not.toBeNull();
    expect(m![1]).toBe(TRACE);
    expect(m![2]).not.toBe(PARENT);
    expect(sent.tracestate).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');

    await receiver.waitFor(
      (all) => all.filter((s) => s.traceId === TRACE).length >= 2,
      'server and client span of the trace',
    );
    const ofTrace = receiver.spans.filter((s) => s.traceId === TRACE);
    const server = ofTrace.find((s) => s.kind === SERVER)!;
    const client = ofTrace.find((s) => s.kind === CLIENT)!;
    expect(server, JSON.stringify(ofTrace)).toBeDefined();
    expect(client, JSON.stringify(ofTrace)).toBeDefined();
    // Parent links: caller -> server span -> client span -> the business server's traceparent.
    expect(server.parentSpanId).toBe(PARENT);
    expect(client.parentSpanId).toBe(server.spanId);
    expect(client.spanId).toBe(m![2]);
    expect(server.service).toBe('ack-under-test');
    expect(server.traceState).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(attribute(server, 'http.request.method')).toBe('POST');
    expect(attribute(server, 'url.path')).toBe('/wwwroot/api/index/transaction');
    expect(attribute(server, 'http.response.status_code')).toBe(200);
    expect(attribute(client, 'url.full')).toBe(business.url);
    expect(attribute(client, 'http.response.status_code')).toBe(200);

    // The access line carries the trace id as a property.
    const access = served
      .output()
      .split('\n')
      .find((l) => l.includes('"POST /wwwroot/api/index/transaction HTTP/1.1" 200'));
    expect(access, served.output()).toBeDefined();
    expect(JSON.parse(access!.slice(access!.indexOf(' {"'))).traceId).toBe(TRACE);
  }, 60_000);

  it('starts a new trace for a malformed traceparent (one character short, uppercase hex, all-zero trace id) and does not pass it on', async () => {
    const receiver = await startReceiver();
    const business = await startBusinessServer();
    const served = await serveTraced(receiver.url, business.url, await freePort());
    const malformed = [
      `00-${TRACE}-${PARENT}-0`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
    ];
    for (const [i, traceparent] of malformed.entries()) {
      const res = await transaction(served.url, { traceparent, tracestate: 'congo=t61rcWkgMzE' });
      expect(res.status, traceparent).toBe(200);
      const sent = business.seen[i]!;
      const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(sent.traceparent ?? '');
      expect(m, `${traceparent} -> ${sent.traceparent}`).not.toBeNull();
      expect(m![1]).not.toBe(TRACE);
      expect(m![1]).not.toBe('0'.repeat(32));
      expect(m![2]).not.toBe(PARENT);
      // The tracestate belonged to the trace that was refused.
      expect(sent.tracestate).toBeUndefined();
      await receiver.waitFor((all) => all.some((s) => s.traceId === m![1] && s.kind === SERVER), 'the new trace');
      const server = receiver.spans.find((s) => s.traceId === m![1] && s.kind === SERVER)!;
      expect(server.parentSpanId ?? '').toBe('');
    }
    expect(receiver.spans.some((s) => s.traceId === TRACE.toUpperCase() || s.parentSpanId === PARENT)).toBe(false);
  }, 60_000);

  it('traces an HTTP/2 stream answered on the stream lane, from the edge on', async () => {
    const receiver = await startReceiver();
    const business = await startBusinessServer();
    const h2cPort = await freePort();
    await serveTraced(receiver.url, business.url, h2cPort);
    const h2 = nodeHttp2Client(`http://127.0.0.1:${h2cPort}`);
    cleanups.push(() => h2.close());
    const res = await h2.send({ path: '/hello.txt', headers: { traceparent: `00-${TRACE}-${PARENT}-01` } });
    expect(res.status).toBe(200);
    await receiver.waitFor((all) => all.some((s) => s.traceId === TRACE), 'the stream span');
    const server = receiver.spans.find((s) => s.traceId === TRACE)!;
    expect(server.kind).toBe(SERVER);
    expect(server.parentSpanId).toBe(PARENT);
    expect(attribute(server, 'network.protocol.version')).toBe('2');
    expect(attribute(server, 'url.path')).toBe('/hello.txt');
    expect(attribute(server, 'http.response.status_code')).toBe(200);
  }, 60_000);
});
