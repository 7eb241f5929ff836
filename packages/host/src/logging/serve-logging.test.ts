import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTestHosts, type TestHome } from '../test-support/index.js';
import { DEFAULT_OUTPUT_TEMPLATE } from '../settings/schema.js';

// `ack serve` as a user runs it (the built CLI: `pnpm build` first, as `pnpm test` does).
const ACK_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../cli/dist/bin.js');

let home: TestHome | undefined;
const hosts = useTestHosts();

describe('ack serve logging', () => {
  it('writes the access line to the console and to the buffered file with the template, flushed at SIGTERM', async () => {
    if (!fs.existsSync(ACK_BIN)) throw new Error(`${ACK_BIN} is missing: run pnpm build first`);
    home = hosts.home({
      AppSettings: { LoadModules: [], UseHttpLogging: true },
      // The default sinks (docs/logging.md): console, and a file buffered for 5 s (flushed by shut-down).
      Serilog: {
        WriteTo: [
          { Name: 'Console', Args: { outputTemplate: DEFAULT_OUTPUT_TEMPLATE } },
          {
            Name: 'File',
            Args: {
              path: '../log/app.log',
              outputTemplate: DEFAULT_OUTPUT_TEMPLATE,
              rollingInterval: 'Infinite',
              buffered: true,
              flushToDiskInterval: '00:05:00',
            },
          },
        ],
      },
    });
    const child = spawn(
      process.execPath,
      [ACK_BIN, 'serve', '--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        const m = /listening on (http:\/\/\S+)/.exec(stdout);
        if (m) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`ack serve exited (${code}):\n${stdout}${stderr}`)));
    });
    expect((await fetch(`${url}/missing.html`)).status).toBe(404);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const accessLine =
      /^\[\d{2}:\d{2}:\d{2} INF\] 127\.0\.0\.1 - - \[[^\]]+\] "GET \/missing\.html HTTP\/1\.1" 404 \d+ "-" "[^"]*" \d+\.\d ms/m;
    expect(stdout).toMatch(accessLine);
    expect(stdout).toMatch(/^\[\d{2}:\d{2}:\d{2} INF\] listening on http/m);
    const file = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
    expect(file).toMatch(accessLine);
    expect(file).toMatch(/SIGTERM: stopping/);
  });
});
