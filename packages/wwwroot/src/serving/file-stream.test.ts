import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCertificate, nodeHttp2Client, waitFor } from '@ack/host/test-support';
import { startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// Files too large to keep in memory are read into a few reused buffers (docs/static-files.md,
// "Large files"): every client must still get exactly its file's bytes, slow readers and HTTP/2
// streams included, and nothing may stay open once a client is gone.

const ROOT = 'modules/wwwroot/wwwroot';
const MiB = 1024 * 1024;
const big = Array.from({ length: 6 }, () => randomBytes(MiB + 12_345));
const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let t: WwwrootFixture;
let root: string;
let certDir: string;

beforeAll(async () => {
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-stream-cert-'));
  const cert = makeTestCertificate(certDir);
  t = await startWwwroot({
    appSettings: { ServerDevCertFilePath: cert.cert, ServerDevCertKeyFilePath: cert.key },
    files: {
      ...Object.fromEntries(big.map((b, i) => [`${ROOT}/big/${i}.bin`, b])),
      [`${ROOT}/big/shrinking.bin`]: randomBytes(4 * MiB),
      [`${ROOT}/big/abandoned.bin`]: randomBytes(4 * MiB),
      [`${ROOT}/big/shrinking-h2.bin`]: randomBytes(4 * MiB),
      [`${ROOT}/big/abandoned-h2.bin`]: randomBytes(4 * MiB),
    },
  });
  root = path.join(t.home.home, ROOT);
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(certDir, { recursive: true, force: true });
});

/**
 * A GET over HTTP/1.1 on its own connection. A slow reader starts late and waits between chunks,
 * so the socket fills and the host's writes queue (back-pressure).
 */
function download(p: string, options: { slow?: boolean; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    http
      .get(`${t.url}${p}`, { agent: false, headers: options.headers }, async (res) => {
        const chunks: Buffer[] = [];
        if (options.slow) await sleep(100);
        try {
          for await (const chunk of res) {
            chunks.push(chunk as Buffer);
            if (options.slow) await sleep(2);
          }
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        } catch (err) {
          reject(err);
        }
      })
      .once('error', reject);
  });
}

/** Descriptors of this process (the host runs in it) open on a file. */
function openDescriptors(file: string): number {
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
}

describe('a large file', () => {
  it('reaches many clients at once byte for byte, slow readers among them', async () => {
    const downloads = Array.from({ length: 24 }, (_, i) =>
      download(`/big/${i % big.length}.bin`, { slow: i % 2 === 1 }).then((r) => ({ i, ...r })),
    );
    for (const { i, status, body } of await Promise.all(downloads)) {
      expect(status).toBe(200);
      expect(body.length).toBe(big[i % big.length]!.length);
      expect(digest(body)).toBe(digest(big[i % big.length]!));
    }
  });

  it('reaches HTTP/2 streams of one connection byte for byte', async () => {
    const client = nodeHttp2Client(t.host.tlsUrl!);
    try {
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => client.send({ path: `/big/${i % big.length}.bin` })),
      );
      replies.forEach((r, i) => {
        expect(r.status).toBe(200);
        expect(digest(r.body)).toBe(digest(big[i % big.length]!));
      });
    } finally {
      await client.close();
    }
  });

  it('answers a range from the middle with exactly those bytes', async () => {
    const r = await download('/big/2.bin', { headers: { Range: 'bytes=70000-700000' } });
    expect(r.status).toBe(206);
    expect(r.body.equals(big[2]!.subarray(70000, 700001))).toBe(true);
  });

  it('cuts the connection when the file shrinks while it is sent, rather than leave the client waiting', async () => {
    const file = path.join(root, 'big/shrinking.bin');
    const outcome = await new Promise<string>((resolve) => {
      http.get(`${t.url}/big/shrinking.bin`, { agent: false }, (res) => {
        let received = 0;
        res.once('data', () => fs.truncateSync(file, MiB));
        res.on('data', (c: Buffer) => (received += c.length));
        res.once('end', () => resolve(`ended after ${received} bytes`));
        res.once('aborted', () => resolve('cut'));
        res.once('error', () => resolve('cut'));
      });
    });
    expect(outcome).toBe('cut');
  });

  it('is closed on the server once its clients have gone mid-download', async () => {
    const file = path.join(root, 'big/abandoned.bin');
    const sockets = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<http.IncomingMessage>((resolve) => {
            http.get(`${t.url}/big/abandoned.bin`, { agent: false }, (res) => res.once('data', () => resolve(res)));
          }),
      ),
    );
    expect(openDescriptors(file)).toBeGreaterThan(0);
    for (const res of sockets) res.destroy();
    await waitFor(() => openDescriptors(file) === 0);
    // And the host goes on serving it.
    const again = await download('/big/abandoned.bin');
    expect(again.body.length).toBe(4 * MiB);
  });

  it('resets an HTTP/2 stream whose file shrinks while it is sent, rather than end it short', async () => {
    const file = path.join(root, 'big/shrinking-h2.bin');
    // A small window holds the transfer at the start until the file has shrunk.
    const client = nodeHttp2Client(t.host.tlsUrl!, { settings: { initialWindowSize: 16 * 1024 } });
    try {
      const outcome = await new Promise<string>((resolve) => {
        const stream = client.session.request({ ':path': '/big/shrinking-h2.bin' });
        let received = 0;
        stream.pause();
        stream.once('response', () => {
          fs.truncateSync(file, MiB);
          setTimeout(() => stream.resume(), 100);
        });
        stream.on('data', (c: Buffer) => (received += c.length));
        stream.once('end', () => resolve(received === 4 * MiB ? 'whole' : `ended after ${received} bytes`));
        stream.once('error', () => resolve('cut'));
        stream.once('close', () => resolve(stream.rstCode !== 0 ? 'cut' : `closed after ${received} bytes`));
      });
      expect(outcome).toBe('cut');
      // The connection and its other streams go on.
      expect((await client.send({ path: '/big/0.bin' })).body.equals(big[0]!)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('is closed on the server once HTTP/2 streams are reset mid-download', async () => {
    const file = path.join(root, 'big/abandoned-h2.bin');
    const client = nodeHttp2Client(t.host.tlsUrl!, { settings: { initialWindowSize: 16 * 1024 } });
    try {
      const streams = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            new Promise<ReturnType<typeof client.session.request>>((resolve) => {
              const stream = client.session.request({ ':path': '/big/abandoned-h2.bin' });
              stream.once('data', () => resolve(stream));
            }),
        ),
      );
      expect(openDescriptors(file)).toBeGreaterThan(0);
      for (const stream of streams) stream.close(http2.constants.NGHTTP2_CANCEL);
      await waitFor(() => openDescriptors(file) === 0);
      const again = await client.send({ path: '/big/abandoned-h2.bin' });
      expect(again.body.length).toBe(4 * MiB);
    } finally {
      await client.close();
    }
  });
});
