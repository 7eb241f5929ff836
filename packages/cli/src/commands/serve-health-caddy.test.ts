import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort, startRedisServer, useTestHosts, type TestHome } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// Two `ack serve` behind a real Caddy that checks their readiness URL (docs/operations.md
// "Health", the Caddy example there): host A keeps its sessions in a private Redis the test stops
// and starts, host B in memory. While Redis is down A is not ready and Caddy sends everything to B;
// a host stopped with SIGTERM fails readiness first and leaves the rotation before it exits. The stop
// delay (3 s) is many health intervals (200 ms), so a balancer on a busy machine still notices.
const hosts = useTestHosts();
const children: ChildProcess[] = [];
const stops: (() => Promise<void>)[] = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-caddy-health-'));
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const stop of stops) await stop();
  fs.rmSync(work, { recursive: true, force: true });
});

function home(name: string, sessionState: object): TestHome {
  return hosts.home(
    {
      AppSettings: {
        LoadModules: ['wwwroot'],
        SessionState: sessionState,
        Health: { StoreProbeIntervalSeconds: 0.2, StopDelaySeconds: 3 },
      },
      Serilog: { WriteTo: [{ Name: 'Console', Args: {} }] },
    },
    { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot' }, 'modules/wwwroot/wwwroot/who.txt': name },
  );
}

async function serve(h: TestHome): Promise<ServingAck> {
  const served = await startAckServe(['--app-dir', h.appDir, '--port', '0', '--host', '127.0.0.1']);
  children.push(served.child);
  return served;
}

async function startCaddy(port: number, upstreams: string[]): Promise<string> {
  const config = path.join(work, 'Caddyfile');
  // The Caddy example of docs/operations.md, with a short interval for the test.
  fs.writeFileSync(
    config,
    `{
	admin off
	auto_https off
	http_port ${port}
}

http://127.0.0.1:${port} {
	bind 127.0.0.1
	reverse_proxy ${upstreams.join(' ')} {
		lb_policy round_robin
		lb_try_duration 5s
		lb_try_interval 100ms
		health_uri /readyz
		health_interval 200ms
		health_timeout 2s
	}
}
`,
  );
  const caddy = spawn('caddy', ['run', '--config', config, '--adapter', 'caddyfile'], {
    env: { ...process.env, XDG_DATA_HOME: work, XDG_CONFIG_HOME: work, HOME: work },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(caddy);
  let out = '';
  caddy.stdout.on('data', (d) => (out += d));
  caddy.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  await vi.waitFor(
    async () => {
      if (caddy.exitCode !== null) throw new Error(`caddy exited (${caddy.exitCode}):\n${out}`);
      expect((await fetch(`${url}/who.txt`)).status).toBe(200);
    },
    { timeout: 30_000, interval: 200 },
  );
  return url;
}

/** Who answered `n` requests through Caddy, in order. */
async function whoAnswers(url: string, n: number): Promise<string[]> {
  const who: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/who.txt`);
    who.push(res.status === 200 ? await res.text() : `status ${res.status}`);
  }
  return who;
}

/** `clients` loops of requests through Caddy, each bounded, until `stop`; what failed, and who answered. */
function steadyLoad(url: string, clients: number) {
  const failed: string[] = [];
  const who = new Set<string>();
  let answered = 0;
  let running = true;
  const loops = Array.from({ length: clients }, async () => {
    for (let i = 0; running && i < 20_000; i++) {
      try {
        const res = await fetch(`${url}/who.txt`);
        const body = await res.text();
        if (res.status === 200) who.add(body);
        else failed.push(`status ${res.status}: ${body.slice(0, 200)}`);
      } catch (err) {
        failed.push(String((err as Error).cause ?? err));
      }
      answered++;
    }
  });
  return {
    answered: () => answered,
    async stop() {
      running = false;
      await Promise.all(loops);
      return { failed, who };
    },
  };
}

describe('behind Caddy with active health checks on /readyz', () => {
  it('sends traffic away from a host whose session store is down and back when it returns, and from a host stopping', async () => {
    const redisPort = await freePort();
    const redis = await startRedisServer(redisPort);
    stops.push(() => redis.stop());
    const a = await serve(
      home('A', { CacheType: 'Redis', RedisConnectionString: `127.0.0.1:${redisPort}`, StoreTimeoutSeconds: 1 }),
    );
    const b = await serve(home('B', { CacheType: 'Memory' }));
    const url = await startCaddy(await freePort(), [a.url.replace('http://', ''), b.url.replace('http://', '')]);

    // Both hosts ready: round robin reaches both.
    await vi.waitFor(async () => expect(new Set(await whoAnswers(url, 6))).toEqual(new Set(['A', 'B'])), {
      timeout: 20_000,
      interval: 200,
    });

    // The session store goes: A is not ready, and Caddy takes it out of rotation.
    await redis.stop();
    await vi.waitFor(
      async () => {
        const res = await fetch(`${a.url}/readyz`);
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({ status: 'not ready', failed: ['sessionStore'] });
      },
      { timeout: 20_000, interval: 100 },
    );
    await vi.waitFor(async () => expect(await whoAnswers(url, 10)).toEqual(Array(10).fill('B')), {
      timeout: 20_000,
      interval: 200,
    });

    // It comes back: A is ready again and gets its share.
    const again = await startRedisServer(redisPort);
    stops.push(() => again.stop());
    await vi.waitFor(async () => expect((await fetch(`${a.url}/readyz`)).status).toBe(200), {
      timeout: 20_000,
      interval: 100,
    });
    await vi.waitFor(async () => expect(await whoAnswers(url, 6)).toContain('A'), { timeout: 20_000, interval: 200 });

    // SIGTERM to B under a steady, bounded load: readiness fails first, Caddy stops sending to it,
    // B closes its kept-alive connections after their next answer, drains and exits cleanly, and no
    // request fails on the way.
    const load = steadyLoad(url, 4);
    await vi.waitFor(() => expect(load.answered()).toBeGreaterThan(50), { timeout: 20_000, interval: 50 });
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    const sinceExit = load.answered();
    await vi.waitFor(() => expect(load.answered()).toBeGreaterThan(sinceExit + 50), { timeout: 20_000, interval: 50 });
    const { failed, who } = await load.stop();
    expect(failed).toEqual([]);
    expect(who.has('B')).toBe(true);
    await vi.waitFor(async () => expect(await whoAnswers(url, 4)).toEqual(Array(4).fill('A')), {
      timeout: 20_000,
      interval: 200,
    });
    a.child.kill('SIGTERM');
    await once(a.child, 'exit');
  });
});
