import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { ACK_BIN, runAck } from '../test-support/spawn-ack.js';

// JSON logs as an operator runs them (docs/logging.md "JSON lines"): `ack serve --workers 2` with
// the original host's CompactJsonFormatter on the console and the file. Every line of the console
// and of app.log is one JSON object with the formatter's fields and the worker that wrote it.
const hosts = useTestHosts();
const COMPACT = 'Serilog.Formatting.Compact.CompactJsonFormatter, Serilog.Formatting.Compact';

describe('ack serve with a JSON formatter', () => {
  it('writes every console and app.log line as compact JSON naming its pid and worker id, access lines included', async () => {
    if (!fs.existsSync(ACK_BIN)) throw new Error(`${ACK_BIN} is missing: run pnpm build first`);
    const home = hosts.home(
      {
        AppSettings: { LoadModules: ['wwwroot'], UseHttpLogging: true, AccessLogFilePath: '../log/access.log' },
        Serilog: {
          WriteTo: [
            { Name: 'Console', Args: { formatter: COMPACT } },
            { Name: 'File', Args: { path: '../log/app.log', rollingInterval: 'Infinite', formatter: COMPACT } },
          ],
        },
      },
      { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot' }, 'modules/wwwroot/wwwroot/a.txt': 'a' },
    );
    const child = spawn(
      process.execPath,
      [ACK_BIN, 'serve', '--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1', '--workers', '2'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await vi.waitFor(
        () => expect(stderr.match(/primary \d+: worker \d+ listening/g) ?? [], stdout + stderr).toHaveLength(2),
        { timeout: 60_000, interval: 100 },
      );
      const url = /listening on (http:\/\/[^\s"]+)/.exec(stdout)![1]!;
      for (let i = 0; i < 20; i++)
        expect((await fetch(`${url}/a.txt?i=${i}`, { headers: { Connection: 'close' } })).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const read = (file: string) => fs.readFileSync(path.join(home.home, 'log', file), 'utf8');
    for (const [where, text] of [
      ['console', stdout],
      ['app.log', read('app.log')],
      ['access.log', read('access.log')],
    ] as const) {
      const lines = text.split('\n');
      expect(lines.pop(), where).toBe('');
      expect(lines.length, where).toBeGreaterThan(0);
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const r of records) {
        expect(r, where).toMatchObject({
          '@t': expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
          '@mt': expect.any(String),
          ProcessId: expect.any(Number),
          WorkerId: expect.any(Number),
        });
      }
      const access = records.filter((r) => / "GET \/a\.txt HTTP\/1\.1" 200 /.test(r['@mt'] as string));
      expect(access, where).toHaveLength(20);
    }
    // The workers' lines name two different processes.
    const consoleRecords = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const listening = consoleRecords.filter((r) => /^listening on/.test(r['@mt'] as string));
    expect(new Set(listening.map((r) => `${r.ProcessId}/${r.WorkerId}`)).size).toBe(2);
  });

  it('ack check warns about a formatter this host does not know, naming the sink, and not about the known ones', async () => {
    const home = hosts.home({
      AppSettings: { LoadModules: [] },
      Serilog: {
        WriteTo: [
          { Name: 'Console', Args: { formatter: COMPACT } },
          {
            Name: 'File',
            Args: {
              path: '../log/app.log',
              formatter: 'Serilog.Formatting.Display.MessageTemplateTextFormatter, Serilog',
            },
          },
        ],
      },
    });
    const run = await runAck(['check', '--app-dir', home.appDir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const warnings = (JSON.parse(run.stdout) as { warnings: string[] }).warnings.filter((w) => w.includes('formatter'));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^Serilog:WriteTo:1: formatter "Serilog\.Formatting\.Display\.MessageTemplateTextFormatter, Serilog" is not supported/,
      ),
    ]);
  });
});
