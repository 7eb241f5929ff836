import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { moduleFiles, useTestHosts } from '../test-support/index.js';

const hosts = useTestHosts();

/** A module that logs text taken from the request, as sync upload logs the uploaded file's path. */
const echoModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/', (req, res) => {
    ctx.logger.info(`stored ${String(req.query.name)}`);
    res.json({ ok: true });
  });
  return { routes: [{ mount: '/echo/api', handler: router }] };
};

describe('log lines cannot be forged from request input', () => {
  it('a line break or control character in a logged message is escaped, not written raw', async () => {
    const home = hosts.home(
      {
        AppSettings: { LoadModules: ['echo'] },
        Serilog: {
          WriteTo: [
            { Name: 'File', Args: { path: '../log/app.log', outputTemplate: '[{Level:u3}] {Message:lj}{NewLine}' } },
          ],
        },
      },
      moduleFiles(['echo']),
    );
    const running = await hosts.start(home, { echo: echoModule });
    const name = 'a.html\n[ERR] FORGED\rx\u0001\u2028y';
    expect((await fetch(`${running.url}/echo/api?${new URLSearchParams({ name })}`)).status).toBe(200);
    await running.close();
    const lines = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8').split(os.EOL);
    expect(lines.some((l) => l.startsWith('[ERR] FORGED'))).toBe(false);
    expect(lines).toContain('[INF] stored a.html\\n[ERR] FORGED\\rx\\u0001\\u2028y');
  });
});
