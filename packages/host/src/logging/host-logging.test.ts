import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestHosts, type TestHome, type TestHost } from '../test-support/index.js';

const hosts = useTestHosts();
let home: TestHome | undefined;
let running: TestHost | undefined;

const TEMPLATE = '[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:lj}{NewLine}{Exception}';

function readLog(): string[] {
  return fs
    .readFileSync(path.join(home!.home, 'log', 'app.log'), 'utf8')
    .split(os.EOL)
    .filter((l) => l !== '');
}

describe('the host logs through the Serilog settings', () => {
  it('writes one access line per request with UseHttpLogging, with the template, flushed by close', async () => {
    home = hosts.home({
      AppSettings: { LoadModules: [], UseHttpLogging: true },
      Serilog: {
        WriteTo: [
          {
            Name: 'File',
            Args: { path: '../log/app.log', outputTemplate: TEMPLATE, buffered: true, flushToDiskInterval: '01:00:00' },
          },
        ],
      },
    });
    running = await hosts.start(home);
    expect((await fetch(`${running.url}/no/such/page?x=1`)).status).toBe(404);
    expect((await fetch(`${running.url}/api/nothing`, { method: 'POST', body: '{}' })).status).toBe(404);
    await running.close();
    running = undefined;
    const access = readLog().filter((l) => l.includes(' http: '));
    expect(access).toHaveLength(2);
    // The combined-like access line (docs/logging.md): still method, path without the query, status, ms and id.
    expect(access[0]).toMatch(
      /^\[\d{2}:\d{2}:\d{2} INF\] http: 127\.0\.0\.1 - - \[[^\]]+\] "GET \/no\/such\/page HTTP\/1\.1" 404 \d+ "-" "[^"]*" \d+\.\d ms( \[[^\]]+\])?$/,
    );
    expect(access[1]).toMatch(
      /^\[\d{2}:\d{2}:\d{2} INF\] http: 127\.0\.0\.1 - - \[[^\]]+\] "POST \/api\/nothing HTTP\/1\.1" 404 \d+ "-" "[^"]*" \d+\.\d ms( \[[^\]]+\])?$/,
    );
  });

  it('writes no access line without UseHttpLogging, or when the http label is raised above Information', async () => {
    home = hosts.home({
      AppSettings: { LoadModules: [], UseHttpLogging: true },
      Serilog: {
        MinimumLevel: { Default: 'Information', Override: { http: 'Warning' } },
        WriteTo: [{ Name: 'File', Args: { path: '../log/app.log', outputTemplate: TEMPLATE } }],
      },
    });
    running = await hosts.start(home);
    await fetch(`${running.url}/x`);
    running.host.logger.info('marker');
    await running.close();
    running = undefined;
    expect(readLog().filter((l) => l.includes('http:'))).toEqual([]);
    expect(readLog().some((l) => l.endsWith('marker'))).toBe(true);
  });

  it('logs its effective settings once at debug level, with secrets redacted', async () => {
    const secrets = {
      HostAccessID: 'host-key-123',
      Security: { SigningKey: 'sign-key-456' },
      SessionState: { MySqlConnectionString: 'Server=db;Uid=ack;Pwd=db-pass-789;' },
    };
    home = hosts.home({
      AppSettings: { LoadModules: [], ...secrets },
      Serilog: {
        MinimumLevel: 'Debug',
        WriteTo: [{ Name: 'File', Args: { path: '../log/app.log', outputTemplate: TEMPLATE } }],
      },
    });
    running = await hosts.start(home);
    await running.close();
    running = undefined;
    const lines = readLog().filter((l) => l.includes('effective settings'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d{2}:\d{2}:\d{2} DBG\] : effective settings \{/);
    const printed = JSON.parse(lines[0]!.slice(lines[0]!.indexOf('{'))) as { AppSettings: Record<string, any> };
    expect(printed.AppSettings.HostAccessID).toBe('***');
    expect(printed.AppSettings.Security.SigningKey).toBe('***');
    expect(printed.AppSettings.SessionState.MySqlConnectionString).toBe('***');
    expect(printed.AppSettings.Security.ExposeSecretValues).toBe(false);
    expect(printed.AppSettings.LoadModules).toEqual([]);
    expect(readLog().join('\n')).not.toMatch(/host-key-123|sign-key-456|db-pass-789/);
  });
});

describe('ModuleLogFilePath', () => {
  it("gives a module's lines a file of their own, and keeps them in the host's log too", async () => {
    const chatty = (ctx: { id: string; logger: { info(m: string): void } }) => {
      ctx.logger.info(`hello from ${ctx.id}`);
      return {};
    };
    home = hosts.home(
      {
        AppSettings: { LoadModules: ['alpha', 'beta'] },
        Serilog: { WriteTo: [{ Name: 'File', Args: { path: '../log/app.log', outputTemplate: TEMPLATE } }] },
      },
      {
        'modules/alpha/module.json': { ModuleID: 'alpha', ModuleConfig: { ModuleLogFilePath: '../log/alpha.log' } },
        'modules/beta/module.json': { ModuleID: 'beta', ModuleConfig: { ModuleLogFilePath: '' } },
      },
    );
    running = await hosts.start(home, { alpha: chatty, beta: chatty });
    running.host.logger.child('alpha').child('sync').info('nested alpha line');
    await running.close();
    running = undefined;
    const alpha = fs
      .readFileSync(path.join(home.home, 'log', 'alpha.log'), 'utf8')
      .split(os.EOL)
      .filter(Boolean);
    expect(alpha).toHaveLength(2);
    expect(alpha[0]).toMatch(/INF\] alpha: hello from alpha$/);
    expect(alpha[1]).toMatch(/INF\] alpha\.sync: nested alpha line$/);
    expect(readLog().some((l) => l.endsWith('hello from beta'))).toBe(true);
    expect(readLog().some((l) => l.endsWith('hello from alpha'))).toBe(true);
    expect(fs.readdirSync(path.join(home.home, 'log')).sort()).toEqual(['alpha.log', 'app.log']);
  });
});
