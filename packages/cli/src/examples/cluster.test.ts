import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConnection } from 'mysql2/promise';
import { describe, expect, it, vi } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { freePort, testDatabases } from '@ack/host/test-support';
import { runAck, startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// examples/cluster as a user runs it: a real nginx (Debian's nginx-light) in front of two built
// `ack serve` processes over one copy of the example home, sessions in the real MariaDB.
const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/cluster');
const TOKEN = 'cluster-example-sync-token';
const table = `Cluster_${crypto.randomBytes(4).toString('hex')}`;
const cleanups = useCleanups();

async function startNginx(dir: string, port: number, a: number, b: number): Promise<ChildProcess> {
  const conf = fs
    .readFileSync(path.join(EXAMPLE, 'nginx.conf.template'), 'utf8')
    .replaceAll('{{DIR}}', dir)
    .replaceAll('{{PORT}}', String(port))
    .replaceAll('{{PORT_A}}', String(a))
    .replaceAll('{{PORT_B}}', String(b));
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const nginx = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  nginx.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  cleanups.push(async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) {
      nginx.kill('SIGQUIT');
      await once(nginx, 'exit');
    }
  });
  await vi.waitFor(
    async () => {
      expect(nginx.exitCode, out).toBeNull();
      await new Promise<void>((resolve, reject) =>
        net
          .connect(port, '127.0.0.1')
          .on('connect', function (this: net.Socket) {
            this.destroy();
            resolve();
          })
          .on('error', reject),
      );
    },
    { timeout: 15_000, interval: 100 },
  );
  return nginx;
}

interface WhoAmI {
  url: string;
  user: string | null;
  visits: number;
  clientIp: string;
  protocol: string;
}

describe('examples/cluster: two hosts behind nginx', () => {
  it('shares sign-in and session across hosts, refuses a tampered or signed-out cookie on both, and serves a sync upload new from both', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-cluster-'));
    cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));
    fs.cpSync(path.join(EXAMPLE, 'home'), path.join(work, 'home'), { recursive: true });
    const appDir = path.join(work, 'home', 'app');
    // The example's settings, with this run's own session table.
    const env = {
      AppSettings__SessionState__MySqlConnectionString: testDatabases().mysqlConnectionString,
      AppSettings__SessionState__MySqlSchemaName: 'test',
      AppSettings__SessionState__MySqlTableName: table,
    };
    cleanups.push(async () => {
      const db = await createConnection(testDatabases().mysqlConnection);
      await db.query(`drop table if exists \`${table}\``);
      await db.end();
    });
    const [portA, portB, port] = [await freePort(), await freePort(), await freePort()];
    const hostsRunning: ServingAck[] = [];
    cleanups.push(async () => {
      for (const h of hostsRunning) {
        h.child.kill('SIGTERM');
        await h.exited;
      }
    });
    // One after the other: the first creates the shared key file and the session table.
    hostsRunning.push(await startAckServe(['--app-dir', appDir, '--host', '127.0.0.1', '--port', String(portA)], env));
    hostsRunning.push(await startAckServe(['--app-dir', appDir, '--host', '127.0.0.1', '--port', String(portB)], env));
    const nginxDir = path.join(work, 'nginx');
    fs.mkdirSync(nginxDir);
    await startNginx(nginxDir, port, portA, portB);
    const base = `http://127.0.0.1:${port}`;

    const signIn = await fetch(`${base}/wwwroot/api/dev-account/sign-in`, { redirect: 'manual' });
    expect(signIn.status).toBe(302);
    const cookies = new Map(
      signIn.headers.getSetCookie().map((c) => c.split(';')[0]!.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    expect(cookies.has('ack.AuthenticationScheme')).toBe(true);
    const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

    const whoami = async (cookie: string): Promise<WhoAmI> => {
      const res = await fetch(`${base}/whoami/api`, { headers: { Cookie: cookie, 'X-Forwarded-For': '203.0.113.7' } });
      expect(res.status).toBe(200);
      for (const c of res.headers.getSetCookie()) {
        const [k, v] = c.split(';')[0]!.split(/=(.*)/s);
        cookies.set(k!, v!);
      }
      return (await res.json()) as WhoAmI;
    };
    const seen: WhoAmI[] = [];
    for (let i = 0; i < 6; i++) seen.push(await whoami(header()));
    expect(new Set(seen.map((s) => s.url))).toEqual(
      new Set([`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`]),
    );
    expect(seen.map((s) => s.user)).toEqual(Array(6).fill('developer'));
    // One session, whichever host answers: the counter goes on from host to host.
    expect(seen.map((s) => s.visits)).toEqual([1, 2, 3, 4, 5, 6]);
    // The client address and scheme as nginx saw them (ForwardProxyIP trusts it).
    expect(seen.every((s) => s.clientIp === '203.0.113.7' && s.protocol === 'http')).toBe(true);

    // A tampered authentication cookie signs nobody in, on either host; a tampered session cookie
    // starts a new session.
    const auth = cookies.get('ack.AuthenticationScheme')!;
    const tamperedAuth = auth.slice(0, -2) + (auth.endsWith('AA') ? 'BB' : 'AA');
    const session = cookies.get('ack.Session')!;
    const tampered = `ack.AuthenticationScheme=${tamperedAuth}; ack.Session=${session.slice(0, -3)}abc`;
    const refused: WhoAmI[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/whoami/api`, { headers: { Cookie: tampered } });
      refused.push((await res.json()) as WhoAmI);
    }
    expect(new Set(refused.map((s) => s.url)).size).toBe(2);
    expect(refused.map((s) => [s.user, s.visits])).toEqual(Array(4).fill([null, 1]));

    // Sign-out through one host: the authentication cookie, replayed, signs nobody in on either host
    // (the sign-out is recorded in the shared session store).
    const signOut = await fetch(`${base}/wwwroot/api/dev-account/sign-out`, {
      method: 'POST',
      headers: { Cookie: header(), Accept: 'application/json' },
    });
    expect(signOut.status).toBe(204);
    const replayed: WhoAmI[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/whoami/api`, { headers: { Cookie: `ack.AuthenticationScheme=${auth}` } });
      replayed.push((await res.json()) as WhoAmI);
    }
    expect(new Set(replayed.map((s) => s.url)).size).toBe(2);
    expect(replayed.map((s) => s.user)).toEqual(Array(4).fill(null));

    // A sync upload through nginx reaches the one home: both hosts serve the new file next.
    for (let i = 0; i < 2; i++) expect(await (await fetch(`${base}/view/page.html`)).text()).toContain('version 1');
    const file = path.join(work, 'page.html');
    fs.writeFileSync(file, '<p>version 2</p>');
    const upload = await runAck(
      ['sync', 'upload', file, '--module', 'wwwroot', '--path', '/HDS/page.html', '--url', base],
      {
        env: { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' },
      },
    );
    expect(upload.stderr).toBe('');
    expect(upload.code).toBe(0);
    // nginx alternates the hosts: four requests reach each host twice.
    for (let i = 0; i < 4; i++) expect(await (await fetch(`${base}/view/page.html`)).text()).toBe('<p>version 2</p>');
  });
});
