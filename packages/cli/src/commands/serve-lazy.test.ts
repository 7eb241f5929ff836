import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { recordLoadedModules } from '../test-support/loaded-modules.js';
import { startAckServe } from '../test-support/spawn-ack.js';

// `ack serve` loads the code of a capability only when the settings or a request use it
// (docs/architecture.md, "What loads only when used"): WebSocket (`ws`) at the first upgrade, the
// rolling log file (winston-daily-rotate-file, moment) with the first File sink, the upload parser
// (multer) at the first upload, the OpenTelemetry SDK when OTEL_* asks for traces; zod comes without its 64 locales. Checked by listing every module
// the process loaded when it exits: the files of the command's bundle and the modules each holds,
// and the packages loaded from node_modules.
const hosts = useTestHosts();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-lazy-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const recorder = recordLoadedModules(dir);

const console = { Name: 'Console', Args: {} };
const socketModule = {
  'modules/sock/module.json': { ModuleID: 'sock', EntryPoint: './index.mjs' },
  'modules/sock/index.mjs': `export default () => ({ upgrades: [{ path: '/sock', handler: (s) => s.close(1000, 'bye') }] });`,
};

/** Starts `ack serve` on a home, runs `use` against it, stops it, and names the packages it loaded. */
async function loadedPackages(
  appDir: string,
  use: (url: string) => Promise<void> = async () => {},
  env: NodeJS.ProcessEnv = {},
) {
  const served = await startAckServe(['--app-dir', appDir, '--port', '0', '--host', '127.0.0.1'], {
    ...env,
    NODE_OPTIONS: recorder.nodeOptions.join(' '),
  });
  await use(served.url);
  served.child.kill('SIGTERM');
  expect(await served.exited, served.output()).toBe(0);
  const files = recorder.take();
  return Object.assign((name: string) => files.some((f) => f.includes(`/node_modules/${name}/`)), { files });
}

function upgrade(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/sock`, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version': '13',
      },
    });
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.once('response', (res) => resolve(res.statusCode ?? 0));
    req.once('error', reject);
  });
}

describe('ack serve loads a capability when it is used', () => {
  it('starts without ws, multer or the rolling log file when the settings do not use them', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: ['sock'] }, Serilog: { WriteTo: [console] } }, socketModule);
    const loaded = await loadedPackages(home.appDir);
    expect(loaded('express')).toBe(true);
    expect(loaded('ws')).toBe(false);
    expect(loaded('multer')).toBe(false);
    expect(loaded('winston-daily-rotate-file')).toBe(false);
    // The tracing SDK and its exporter load only when OTEL_* asks for traces. (The small
    // `@opentelemetry/api` is loaded by prom-client, for exemplars, whatever the settings.)
    expect(loaded('@opentelemetry/sdk-trace-base')).toBe(false);
    expect(loaded('@opentelemetry/exporter-trace-otlp-http')).toBe(false);
    // zod's messages in every language: nothing reads them; English comes from its own module.
    expect(loaded('zod')).toBe(true);
    expect(loaded.files.filter((f) => /\/zod\/v4\/locales\/(?!en\.js$)/.test(f))).toEqual([]);
  }, 30_000);

  it('loads ws at the first upgrade, and the rolling log file with a File sink', async () => {
    const home = hosts.home(
      {
        AppSettings: { LoadModules: ['sock'] },
        Serilog: { WriteTo: [console, { Name: 'File', Args: { path: '../log/app.log' } }] },
      },
      socketModule,
    );
    const loaded = await loadedPackages(home.appDir, async (url) => {
      expect(await upgrade(url)).toBe(101);
    });
    expect(loaded('ws')).toBe(true);
    expect(loaded('winston-daily-rotate-file')).toBe(true);
  }, 30_000);

  it('loads the OpenTelemetry SDK when the OTEL_* variables ask for traces', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: ['sock'] }, Serilog: { WriteTo: [console] } }, socketModule);
    // Nothing listens there: spans that cannot be delivered are a warning, not a failed stop.
    const loaded = await loadedPackages(home.appDir, async () => {}, {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(loaded('@opentelemetry/sdk-trace-base')).toBe(true);
    expect(loaded('@opentelemetry/exporter-trace-otlp-http')).toBe(true);
  }, 30_000);
});
