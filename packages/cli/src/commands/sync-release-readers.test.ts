import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, waitFor } from '@ack/host/test-support';
import { useCleanups } from '../test-support/cleanups.js';
import { pushRelease, releaseAuth, releaseHome } from '../test-support/release-home.js';
import { startAckServe } from '../test-support/spawn-ack.js';

// Readers never see a mix (docs/releases.md "A pass of a reader"): `ack serve --workers 2` with
// releases on, 500 files under HDS/ each naming its release. While a push of all 500 files and 19
// rollbacks through the host's endpoint switch the live release 20 times, a reader over HTTP/1.1
// and one over HTTP/2 (TLS) fetch all 500 files in one pass, again and again, pinning every request
// of a pass to the release its first answer named. No pass may hold two releases or a 404; the
// readers must have seen every release. Each switch waits until a pass has begun after it (pinned,
// that pass reads the release whole while the next switches happen): a few requests in flight per
// pass keep a pass, and so the test, short.

const FILES = 500;
const PER_PASS = 4; // requests in flight per pass: small, so that a pass stays short on a loaded machine
const cleanups = useCleanups();
const names = Array.from({ length: FILES }, (_, i) => `s${String(i % 10)}/f${String(i).padStart(3, '0')}.html`);
const tree = (marker: string) => Object.fromEntries(names.map((n) => [n, `<p data-release="${marker}">${n}</p>\n`]));
const markerOf = (body: string) => /data-release="([^"]+)"/.exec(body)?.[1] ?? `unreadable: ${body.slice(0, 80)}`;

interface Answer {
  status: number;
  release: string;
  body: string;
}
type Get = (rel: string, pin?: string) => Promise<Answer>;

function http1Getter(url: string, agent: http.Agent): Get {
  return (rel, pin) =>
    new Promise((resolve, reject) => {
      const req = http.get(
        `${url}/view/${rel}`,
        { agent, timeout: 20_000, headers: pin ? { 'ack-release': pin } : {} },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, release: String(res.headers['ack-release']), body }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET ${rel} timed out`)));
      req.on('error', reject);
    });
}

function http2Getter(session: http2.ClientHttp2Session): Get {
  return (rel, pin) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':path': `/view/${rel}`, ...(pin ? { 'ack-release': pin } : {}) });
      stream.setTimeout(20_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      let status = 0;
      let release = '';
      let body = '';
      stream.setEncoding('utf8');
      stream.on('response', (h) => {
        status = Number(h[':status']);
        release = String(h['ack-release']);
      });
      stream.on('data', (d: string) => (body += d));
      stream.on('end', () => resolve({ status, release, body }));
      stream.on('error', reject);
      stream.on('close', () => {
        if (status === 0) reject(new Error(`GET ${rel} over HTTP/2 closed without an answer`));
      });
    });
}

interface Pass {
  /** The switch count when the pass began and when it ended (-1 while under way). */
  from: number;
  to: number;
  /** Releases named by the answers' `ack-release`, and markers read in the bodies. */
  releases: Set<string>;
  markers: Set<string>;
  statuses: Set<number>;
}

/** One pass: the first file unpinned, then every other file pinned to the release it named. */
async function onePass(get: Get, switches: () => number, passes: Pass[]): Promise<void> {
  const pass: Pass = { from: switches(), to: -1, releases: new Set(), markers: new Set(), statuses: new Set() };
  passes.push(pass);
  const take = (a: Answer) => {
    pass.releases.add(a.release);
    pass.markers.add(markerOf(a.body));
    pass.statuses.add(a.status);
  };
  const first = await get(names[0]!);
  take(first);
  let next = 1;
  await Promise.all(
    Array.from({ length: PER_PASS }, async () => {
      while (next < FILES) take(await get(names[next++]!, first.release));
    }),
  );
  pass.to = switches();
}

describe('readers of a release prefix across 20 switches, ack serve --workers 2', () => {
  it('no pass over HTTP/1.1 or HTTP/2 mixes two releases, and the readers see every release', async () => {
    const home = releaseHome(cleanups, tree('r0'), { Keep: 10 });
    const port = await freePort();
    // HTTPS beside HTTP, with the development certificate `ack serve` makes (docs/protocols.md):
    // the HTTP/2 reader negotiates h2 over TLS, as a browser does.
    const served = await startAckServe([
      '--app-dir',
      home.appDir,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--https-port',
      '0',
      '--workers',
      '2',
    ]);
    cleanups.push(async () => {
      if (served.child.exitCode === null && served.child.signalCode === null) {
        served.child.kill('SIGTERM');
        await served.exited;
      }
    });
    // Both workers listen on both endpoints before any reader starts.
    const tlsUrl = await waitFor(
      () => [...served.output().matchAll(/endpoint Https on (https:\/\/\S+)/g)].map((m) => m[1]!)[1],
      { timeout: 30_000, message: () => `both workers to listen on HTTPS:\n${served.output()}` },
    );

    const agents = [new http.Agent({ keepAlive: true, maxSockets: PER_PASS })];
    const sessions = [http2.connect(tlsUrl, { rejectUnauthorized: false })];
    cleanups.push(() => {
      for (const a of agents) a.destroy();
      for (const s of sessions) s.destroy();
    });
    for (const s of sessions) s.on('error', () => undefined);
    const readers: Array<{ name: string; get: Get; passes: Pass[] }> = [
      ...agents.map((a, i) => ({ name: `HTTP/1.1 #${i}`, get: http1Getter(served.url, a), passes: [] as Pass[] })),
      ...sessions.map((s, i) => ({ name: `HTTP/2 #${i}`, get: http2Getter(s), passes: [] as Pass[] })),
    ];

    // r0 adopted and r1 pushed before the readers start: a pass is pinned by its first answer's
    // `ack-release`, which a prefix gets with its first release.
    await pushRelease(served.url, tree('r1'));
    let switches = 0;
    let stop = false;
    const reading = readers.map(async (r) => {
      // Bounded: the readers stop when the switching is over, or after 400 passes whatever happens.
      while (!stop && r.passes.length < 400) await onePass(r.get, () => switches, r.passes);
    });
    /**
     * Waits until a pass (of any reader) has begun after the latest switch: it reads that release
     * in whole, pinned, while the next switches happen.
     */
    const aPassAfterSwitch = () =>
      waitFor(() => readers.some((r) => r.passes.some((p) => p.from === switches)), {
        timeout: 30_000,
        message: () => `a pass after switch ${switches}`,
      });

    const api = `${served.url}/wwwroot/api/sync/releases`;
    try {
      await aPassAfterSwitch();
      // Switch 1: a push of the whole tree (500 files changed) while the readers read.
      await pushRelease(served.url, tree('r2'));
      switches++;
      await aPassAfterSwitch();
      const listed = (await (await fetch(`${api}/?moduleName=wwwroot&path=HDS/`, { headers: releaseAuth })).json()) as {
        releases: Array<{ id: string }>;
      };
      const ids = listed.releases.map((r) => r.id).reverse(); // oldest first: r0, r1, r2
      expect(ids).toHaveLength(3);
      // Switches 2 to 20 through the host's rollback endpoint, cycling r0, r1, r2 from r2 live.
      for (let i = 0; i < 19; i++) {
        const to = ids[i % 3]!;
        const res = await fetch(`${api}/rollback?moduleName=wwwroot&path=HDS/&to=${to}`, {
          method: 'POST',
          headers: releaseAuth,
        });
        expect(res.status).toBe(200);
        expect(fs.readlinkSync(home.hds)).toBe(`.ack-releases/HDS/${to}`);
        switches++;
        await aPassAfterSwitch();
      }
    } finally {
      stop = true;
      await Promise.all(reading);
    }

    expect(switches).toBe(20);
    for (const r of readers) {
      expect(r.passes.every((p) => p.to >= 0)).toBe(true);
      const mixed = r.passes.filter((p) => p.releases.size !== 1 || p.markers.size !== 1);
      expect(
        mixed.map((p) => [...p.releases, ...p.markers]),
        `${r.name}: passes that mixed releases`,
      ).toEqual([]);
      expect(new Set(r.passes.flatMap((p) => [...p.statuses])), r.name).toEqual(new Set([200]));
      expect(new Set(r.passes.flatMap((p) => [...p.markers])).size, `${r.name}: releases seen`).toBeGreaterThan(1);
    }
    const seen = new Set(readers.flatMap((r) => r.passes.flatMap((p) => [...p.markers])));
    expect(seen).toEqual(new Set(['r0', 'r1', 'r2']));
    // Some passes were under way while a switch happened: the pin held them on one release.
    expect(readers.flatMap((r) => r.passes).filter((p) => p.to !== p.from).length).toBeGreaterThan(0);
    expect(path.basename(fs.readlinkSync(home.hds))).toMatch(/^r-/);
  }, 110_000);
});
