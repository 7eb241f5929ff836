import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, waitFor } from '@ack/host/test-support';
import { ACK_BIN } from '../test-support/spawn-ack.js';

// Clients that stop taking their answers (docs/pipeline.md "Slow and greedy clients"), against the
// built `ack serve` run with a real open-file limit, as a host under systemd or in a container has.

const BIG = 16 * 1024 * 1024;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function serveWithFileLimit(limit: number, env: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-stalls-'));
  fs.writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(BIG, 7));
  fs.writeFileSync(path.join(dir, 'small.txt'), 'small\n');
  const [port, h2Port] = [await freePort(), await freePort()];
  const child = spawn('sh', ['-c', `ulimit -n ${limit}; exec "$0" "$@"`, process.execPath, ACK_BIN, 'serve', dir], {
    env: {
      ...process.env,
      AppSettings__ServerPort: String(port),
      Kestrel__Endpoints__H2C__Url: `http://127.0.0.1:${h2Port}`,
      Kestrel__Endpoints__H2C__Protocols: 'Http2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  cleanups.push(() => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(() => /\(h2c\)/.test(out), { timeout: 30_000, message: () => `ack serve to listen on h2c:\n${out}` });
  const big = path.join(dir, 'big.bin');
  /** How many descriptors the host holds open on the big file (sh exec'd into node: one pid). */
  const openOnBig = () => {
    let n = 0;
    for (const fd of fs.readdirSync(`/proc/${child.pid}/fd`)) {
      try {
        if (fs.readlinkSync(`/proc/${child.pid}/fd/${fd}`) === big) n++;
      } catch {
        // closed meanwhile
      }
    }
    return n;
  };
  return { url: `http://127.0.0.1:${port}`, h2Url: `http://127.0.0.1:${h2Port}`, output: () => out, openOnBig };
}

/** Opens `streams` GETs of the big file on one HTTP/2 connection whose window never opens. */
async function stalledSession(url: string, streams: number) {
  const session = http2.connect(url, { settings: { initialWindowSize: 0 } });
  session.on('error', () => {});
  cleanups.push(() => session.destroy());
  const answered = await Promise.all(
    Array.from(
      { length: streams },
      () =>
        new Promise<string>((resolve) => {
          const stream = session.request({ ':path': '/big.bin' });
          stream.on('response', () => resolve('headers'));
          stream.on('error', () => resolve('refused'));
          stream.on('close', () => resolve('closed'));
        }),
    ),
  );
  return { session, answered };
}

/** A GET over a new HTTP/1.1 connection; resolves with its status and body length, or the error. */
function getOnce(url: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve(`${res.statusCode} ${bytes}`));
      res.on('error', (e) => resolve(e.message));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve(e.message));
  });
}

describe('clients that stop taking their answers', () => {
  it('cannot take every open file of the host: one client stalling 1,100 HTTP/2 streams leaves another client served', async () => {
    const host = await serveWithFileLimit(1024, {});
    // 11 connections of 100 streams (MaxStreamsPerConnection), none of them ever read.
    const sessions = await Promise.all(Array.from({ length: 11 }, () => stalledSession(host.h2Url, 100)));
    const outcomes = sessions.flatMap((s) => s.answered);
    // Up to Http2:MaxStreamsPerClient (256) hold an answer; the others are refused, not queued.
    expect(outcomes.filter((o) => o === 'headers').length).toBeLessThanOrEqual(256);
    expect(host.openOnBig()).toBeLessThanOrEqual(256);
    expect(await getOnce(`${host.url}/small.txt`, 10_000)).toBe('200 6');
    expect(await getOnce(`${host.url}/big.bin`, 20_000)).toBe(`200 ${BIG}`);
  }, 90_000);

  it('resets the HTTP/2 streams whose client never opens its window, and lets go of their files', async () => {
    const host = await serveWithFileLimit(1024, { Kestrel__Limits__ResponseStallTimeout: '00:00:02' });
    const { session } = await stalledSession(host.h2Url, 10);
    await waitFor(() => host.openOnBig() === 10, { timeout: 10_000, message: 'ten stalled answers to open the file' });
    await waitFor(() => host.openOnBig() === 0, { timeout: 20_000, message: 'the stalled streams to be reset' });
    // The connection stays: a stream opened on it now, with the window open, gets its answer.
    session.settings({ initialWindowSize: 65_535 });
    const small = await new Promise<string>((resolve) => {
      const stream = session.request({ ':path': '/small.txt' });
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (body += d));
      stream.on('end', () => resolve(body));
      stream.on('error', (e) => resolve(e.message));
    });
    expect(small).toBe('small\n');
  }, 60_000);

  it('cuts an HTTP/1.1 answer its client stops reading, and finishes one read slowly but steadily', async () => {
    const host = await serveWithFileLimit(1024, { Kestrel__Limits__ResponseStallTimeout: '00:00:02' });
    const { port } = new URL(host.url);

    // Never reads: once the socket buffers are full nothing goes out, and the host lets go of the
    // connection and of the file it was sending.
    const stalled = net.connect(Number(port), '127.0.0.1');
    stalled.on('error', () => {});
    cleanups.push(() => stalled.destroy());
    stalled.pause();
    stalled.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => host.openOnBig() === 1, { timeout: 10_000, message: 'the stalled answer to open the file' });
    await waitFor(() => host.openOnBig() === 0, { timeout: 20_000, message: 'the stalled answer to be cut' });
    expect(host.output()).toMatch(/response not taken by its client for 2000 ms: cut/);

    // Reads 64 KiB every 50 ms (1.25 MiB/s) for 8 s, far longer than the stall time-out with the
    // buffers full, then the rest at once: every byte arrives.
    const slow = net.connect(Number(port), '127.0.0.1');
    cleanups.push(() => slow.destroy());
    slow.pause();
    slow.write('GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let received = 0;
    const slowEnded = new Promise<void>((resolve) => slow.once('end', () => resolve()));
    const started = Date.now();
    await new Promise<void>((resolve) => {
      const reader = setInterval(() => {
        const chunk = slow.read(Math.min(64 * 1024, slow.readableLength)) as Buffer | null;
        if (chunk) received += chunk.length;
        if (Date.now() - started > 8000) {
          clearInterval(reader);
          resolve();
        }
      }, 50);
    });
    expect(received).toBeLessThan(BIG); // still reading when the fast part starts
    slow.on('data', (d: Buffer) => (received += d.length));
    slow.resume();
    await slowEnded;
    const head = `HTTP/1.1 200 OK`;
    expect(received).toBeGreaterThan(BIG);
    expect(received).toBeLessThan(BIG + 2048 + head.length);
  }, 60_000);
});
