import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '@ack/host/test-support';
import { useCleanups } from '../test-support/cleanups.js';
import { ACK_BIN, runAck, startAckServe, testCacheHome, type ServingAck } from '../test-support/spawn-ack.js';

// A release pushed to two `ack serve` processes, each with its own copy of the examples/cluster
// home, behind the example's nginx: a host killed (SIGKILL) after it staged and before the switch
// leaves both on the old release; `ack sync status` sees a file edited by hand on one host's disk.
const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/cluster');
const TOKEN = 'cluster-example-sync-token';
const cleanups = useCleanups();
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' };

async function startNginx(dir: string, port: number, a: number, b: number): Promise<ChildProcess> {
  const conf = fs
    .readFileSync(path.join(EXAMPLE, 'nginx.conf.template'), 'utf8')
    .replaceAll('{{DIR}}', dir)
    .replaceAll('{{PORT}}', String(port))
    .replaceAll('{{PORT_A}}', String(a))
    .replaceAll('{{PORT_B}}', String(b));
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const nginx = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) {
      nginx.kill('SIGQUIT');
      await once(nginx, 'exit');
    }
  });
  await vi.waitFor(
    () =>
      new Promise<void>((resolve, reject) =>
        net
          .connect(port, '127.0.0.1')
          .on('connect', function (this: net.Socket) {
            this.destroy();
            resolve();
          })
          .on('error', reject),
      ),
    { timeout: 15_000, interval: 100 },
  );
  return nginx;
}

/**
 * A TCP relay to `port` that holds the first request sending a file into a stage (it is never
 * forwarded): the host has staged, and has not got the file, when `held` resolves.
 */
async function holdingRelay(port: number) {
  let hold!: (socket: net.Socket) => void;
  const held = new Promise<net.Socket>((r) => (hold = r));
  let holding = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      // The stage's files go in a batch naming the release (docs/wire-formats.md "Sync releases").
      const head = chunk.toString('latin1');
      if (!holding && head.startsWith('POST /wwwroot/api/sync/batch?') && /^[^\r]*[?&]release=/.test(head)) {
        holding = true;
        hold(client);
      }
      if (holding && client === heldClient) return;
      upstream.write(chunk);
    });
    let heldClient: net.Socket | undefined;
    void held.then((c) => (heldClient = c));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, held };
}

/** A copy of the example home with releases on. */
function home(work: string, name: string): { appDir: string; hds: string } {
  const root = path.join(work, name);
  fs.cpSync(path.join(EXAMPLE, 'home'), root, { recursive: true });
  fs.writeFileSync(
    path.join(root, 'modules', 'wwwroot', 'module.json'),
    JSON.stringify({
      ModuleID: 'wwwroot',
      ModuleConfig: {
        ContractRequestPath: 'view',
        ContractBasePath: '../contracts/wwwroot',
        WWWRootBasePath: '../modules/wwwroot/wwwroot',
        FileSyncTokens: [TOKEN],
        IsEnabledReleases: true,
      },
    }),
  );
  return { appDir: path.join(root, 'app'), hds: path.join(root, 'contracts', 'wwwroot', 'HDS') };
}

describe('examples/cluster: a release on two hosts behind nginx', () => {
  it('a host killed after staging: neither switches, both serve the old release; status sees a hand edit', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-cluster-release-'));
    cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));
    const [a, b] = [home(work, 'a'), home(work, 'b')];
    // No shared session store here: each host alone, sessions off.
    const serveEnv = { AppSettings__SessionState__IsSession: 'false' };
    const [portA, portB, port] = [await freePort(), await freePort(), await freePort()];
    const running: ServingAck[] = [];
    cleanups.push(async () => {
      for (const h of running)
        if (h.child.exitCode === null && h.child.signalCode === null) {
          h.child.kill('SIGTERM');
          await h.exited;
        }
    });
    const serve = async (appDir: string, p: number) => {
      const h = await startAckServe(['--app-dir', appDir, '--host', '127.0.0.1', '--port', String(p)], serveEnv);
      running.push(h);
      return h;
    };
    const hostA = await serve(a.appDir, portA);
    let hostB = await serve(b.appDir, portB);
    const nginxDir = path.join(work, 'nginx');
    fs.mkdirSync(nginxDir);
    await startNginx(nginxDir, port, portA, portB);
    const page = async () => (await fetch(`http://127.0.0.1:${port}/view/page.html`)).text();

    const v1 = path.join(work, 'v1');
    fs.mkdirSync(v1);
    fs.writeFileSync(path.join(v1, 'page.html'), '<p>v1</p>');
    const first = await runAck(
      ['sync', 'upload', v1, '--module', 'wwwroot', '--path', 'HDS/', '--url', hostA.url, '--url', hostB.url],
      { env },
    );
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const r1 = fs.readlinkSync(a.hds);
    expect(fs.readlinkSync(b.hds)).toBe(r1);
    for (let i = 0; i < 4; i++) expect(await page()).toBe('<p>v1</p>');

    // v2: B's first file into its stage is held; B is killed there, after it staged.
    const relay = await holdingRelay(portB);
    fs.writeFileSync(path.join(v1, 'page.html'), '<p>v2</p>');
    const push = spawn(
      process.execPath,
      [
        ACK_BIN,
        'sync',
        'upload',
        v1,
        '--module',
        'wwwroot',
        '--path',
        'HDS/',
        '--url',
        hostA.url,
        '--url',
        relay.url,
        '--retries',
        '0',
      ],
      { env: { ...process.env, XDG_CACHE_HOME: testCacheHome(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    push.stderr.on('data', (d) => (stderr += d));
    const pushed = new Promise<number | null>((r) => push.on('exit', (code) => r(code)));
    const heldClient = await relay.held;
    const staging = path.join(path.dirname(b.hds), '.ack-releases', 'HDS');
    expect(fs.readdirSync(staging).filter((n) => n.endsWith('.staging'))).toHaveLength(1);
    hostB.child.kill('SIGKILL');
    await hostB.exited;
    heldClient.destroy();
    expect(await pushed).toBe(1);
    expect(stderr).toMatch(/no host switched/);
    expect(fs.readlinkSync(a.hds)).toBe(r1);
    expect(fs.readlinkSync(b.hds)).toBe(r1);
    const stagingA = path.join(path.dirname(a.hds), '.ack-releases', 'HDS');
    expect(fs.readdirSync(stagingA).filter((n) => n.endsWith('.staging'))).toEqual([]);
    // With B down nginx sends every reader to A: the old release.
    for (let i = 0; i < 4; i++) expect(await page()).toBe('<p>v1</p>');

    // B back: its start removes the stage it died with; both serve v1, and agree.
    hostB = await serve(b.appDir, portB);
    for (let i = 0; i < 4; i++) expect(await page()).toBe('<p>v1</p>');
    const same = await runAck(['sync', 'status', '--path', 'HDS/', '--url', hostA.url, '--url', hostB.url], { env });
    expect(same.code).toBe(0);
    await vi.waitFor(() => expect(fs.readdirSync(staging).filter((n) => n.endsWith('.staging'))).toEqual([]));

    // A hand edit on B's disk (same size): drift, named.
    fs.writeFileSync(path.join(b.hds, 'page.html'), '<p>vX</p>');
    const drift = await runAck(['sync', 'status', '--path', 'HDS/', '--url', hostA.url, '--url', hostB.url], { env });
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(/^differs HDS\/page\.html: /m);
  });
});
