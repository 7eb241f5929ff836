import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '@ack/host/test-support';
import { useCleanups } from '../test-support/cleanups.js';
import { releaseAuth, releaseHome } from '../test-support/release-home.js';
import { runAck, startAckServe } from '../test-support/spawn-ack.js';

// A rolling restart in the middle of a push (docs/scale-out.md "Start-up work"): the new workers
// start beside the old ones still serving, so they must not take a stage being filled for debris
// of a stopped host. Only a host that starts with no worker serving recovers (docs/releases.md
// "Crash safety").

const cleanups = useCleanups();
const q = 'moduleName=wwwroot&path=HDS/';

describe('a release stage across a rolling restart of ack serve --workers 2', () => {
  it('is still there after ack reload, and commits; a stage left by a stopped host is removed at its next start', async () => {
    const home = releaseHome(cleanups, { 'a.html': 'old' });
    const port = await freePort();
    const start = async () => {
      const served = await startAckServe([
        '--app-dir',
        home.appDir,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--workers',
        '2',
      ]);
      cleanups.push(async () => {
        if (served.child.exitCode === null && served.child.signalCode === null) {
          served.child.kill('SIGTERM');
          await served.exited;
        }
      });
      return served;
    };
    let served = await start();
    const api = `${served.url}/wwwroot/api/sync/releases`;
    const stage = async () => {
      const staged = await fetch(`${api}/stage?${q}`, { method: 'POST', headers: releaseAuth });
      expect(staged.status).toBe(201);
      return ((await staged.json()) as { id: string }).id;
    };
    const put = (id: string, body: string) =>
      fetch(`${api}/stage/${id}/file?${q}&filePath=a.html`, { method: 'PUT', headers: releaseAuth, body });

    // A push stages, then every worker is replaced before it commits.
    const id = await stage();
    expect((await put(id, 'new')).status).toBe(200);
    const reload = await runAck(['reload', '--app-dir', home.appDir]);
    expect(reload.code, reload.stdout + reload.stderr).toBe(0);
    expect(fs.existsSync(path.join(home.releases, `${id}.staging`))).toBe(true);
    const committed = await fetch(`${api}/stage/${id}/commit?${q}`, { method: 'POST', headers: releaseAuth });
    expect(committed.status, await committed.clone().text()).toBe(200);
    expect(await (await fetch(`${served.url}/view/a.html`)).text()).toBe('new');

    // Its neighbour: a stage whose host stopped is debris, and the next start removes it.
    const left = await stage();
    expect((await put(left, 'never')).status).toBe(200);
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    expect(fs.existsSync(path.join(home.releases, `${left}.staging`))).toBe(true);
    served = await start();
    expect(fs.existsSync(path.join(home.releases, `${left}.staging`))).toBe(false);
    expect(await (await fetch(`${served.url}/view/a.html`)).text()).toBe('new');
  });
});
