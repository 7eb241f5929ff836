import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { useTestHosts } from '../test-support/index.js';

// The trace id on the log lines of a request that has a trace (docs/operations.md "Traces"): its
// access line and the error line of its 500 carry a `traceId` property; a request without a valid
// `traceparent` (and no span export) has none.

const hosts = useTestHosts();
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const VALID = `00-${TRACE}-00f067aa0ba902b7-01`;

const boomModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/', () => {
    throw new Error('kaput');
  });
  return { routes: [{ mount: '/boom', handler: router }] };
};

async function logLines(traceparent: string | undefined): Promise<{ access: string; error: string; text: string }> {
  const home = hosts.home(
    {
      AppSettings: { LoadModules: ['boom'], UseHttpLogging: true },
      Serilog: {
        WriteTo: [
          {
            Name: 'File',
            Args: {
              path: '../log/app.log',
              outputTemplate: '{Level:u3} {Message:lj} {Properties:j}{NewLine}{Exception}',
            },
          },
        ],
      },
    },
    { 'modules/boom/module.json': { ModuleID: 'boom' } },
  );
  const running = await hosts.start(home, { boom: boomModule });
  const res = await fetch(`${running.url}/boom`, { headers: traceparent ? { traceparent } : {} });
  expect(res.status).toBe(500);
  await running.close();
  const text = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
  const lines = text.split(os.EOL);
  return {
    text,
    access: lines.find((l) => l.startsWith('INF ') && l.includes('"GET /boom HTTP/1.1" 500'))!,
    error: lines.find((l) => l.startsWith('ERR GET /boom failed'))!,
  };
}

const properties = (line: string) => JSON.parse(line.slice(line.lastIndexOf(' {"'))) as Record<string, unknown>;

describe('trace ids in log lines', () => {
  it('a request with a traceparent: its access line and its error line carry the trace id', async () => {
    const { access, error, text } = await logLines(VALID);
    expect(properties(access)).toMatchObject({ SourceContext: 'http', traceId: TRACE });
    expect(properties(error)).toEqual({ ProcessId: process.pid, traceId: TRACE });
    // The error's stack still follows its line.
    expect(text).toMatch(/ERR GET \/boom failed .*\r?\nError: kaput\r?\n\s+at /);
  });

  it.each([
    ['no traceparent', undefined],
    ['a traceparent one character short', VALID.slice(0, -1)],
  ])('a request with %s: no trace id on either line', async (_case, traceparent) => {
    const { access, error } = await logLines(traceparent);
    expect(properties(access)).toEqual({ ProcessId: process.pid, SourceContext: 'http' });
    expect(error).not.toContain('traceId');
  });
});
