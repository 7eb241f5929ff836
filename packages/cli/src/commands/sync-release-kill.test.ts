import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '@ack/host/test-support';
import { useCleanups } from '../test-support/cleanups.js';
import { pushRelease, releaseHome, type ReleaseHome } from '../test-support/release-home.js';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// Crash safety of releases (docs/releases.md "Crash safety"): `ack serve` killed with SIGKILL at
// a seeded random moment of a push (stage, batch into the stage, commit and switch), then started
// again. After each start the host serves exactly one whole release, the old one or the new one,
// and no stage or note of a stage is left under `.ack-releases`. Each push is a release of 20
// files that all carry its marker.
//
// ITERATIONS: one iteration is a push cut short plus a host start: 0.9 s on a quiet 2-core machine,
// 1.7 to 2.1 s on a loaded one (measured 2026-11-29): 50 take about 45 s quiet, 105 s loaded.

const SEED = 20261129;
const ITERATIONS = 50;
const FILES = 20;
const cleanups = useCleanups();
const names = Array.from({ length: FILES }, (_, i) => `d${String(i % 3)}/f${String(i).padStart(2, '0')}.html`);
const tree = (marker: string) => Object.fromEntries(names.map((n) => [n, `<p data-release="${marker}">${n}</p>`]));
const markerOf = (body: string) => /data-release="([^"]+)"/.exec(body)?.[1] ?? `unreadable: ${body.slice(0, 80)}`;

/** A small seeded generator (mulberry32): the same delays on every run of the test. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function serve(home: ReleaseHome, port: number): Promise<ServingAck> {
  const served = await startAckServe(['--app-dir', home.appDir, '--host', '127.0.0.1', '--port', String(port)]);
  cleanups.push(() => {
    if (served.child.exitCode === null && served.child.signalCode === null) served.child.kill('SIGKILL');
  });
  return served;
}

/** What the host serves under HDS/: every file's status, release and marker. */
async function servedTree(url: string) {
  const answers = await Promise.all(
    names.map(async (n) => {
      const r = await fetch(`${url}/view/${n}`);
      return { status: r.status, release: r.headers.get('ack-release'), marker: markerOf(await r.text()) };
    }),
  );
  return {
    statuses: new Set(answers.map((a) => a.status)),
    releases: new Set(answers.map((a) => a.release)),
    markers: new Set(answers.map((a) => a.marker)),
  };
}

/** What a crash may leave and the start must remove: stages, their notes, the temporary link. */
function debris(home: ReleaseHome): string[] {
  const left = fs.existsSync(home.releases)
    ? fs
        .readdirSync(home.releases)
        .filter((n) => n.endsWith('.staging') || n.endsWith('.by') || n.endsWith('.base') || n.includes('ack-tmp'))
    : [];
  const link = path.join(home.contracts, '.HDS.ack-link');
  return fs.existsSync(link) ? [...left, link] : left;
}

describe('ack serve killed during release pushes', () => {
  it('starts again on exactly one whole release, old or new, with no stage left', async () => {
    const home = releaseHome(cleanups, tree('m0'), { Keep: 3 });
    const port = await freePort();
    const random = seeded(SEED);
    let served = await serve(home, port);
    // How long a whole push takes here (the first, with the adoption, is the slowest): the kills
    // fall anywhere in the first 80% of that, most of them inside a push, some after its answer.
    const t0 = Date.now();
    await pushRelease(served.url, tree('m1'));
    const window = (Date.now() - t0) * 0.8;
    let live = 'm1';
    const outcomes: boolean[] = [];
    for (let i = 2; i < ITERATIONS + 2; i++) {
      const marker = `m${i}`;
      const pushed = pushRelease(served.url, tree(marker)).then(
        () => true,
        () => false,
      );
      await new Promise((r) => setTimeout(r, random() * window));
      served.child.kill('SIGKILL');
      await served.exited;
      const done = await pushed;
      outcomes.push(done);

      served = await serve(home, port);
      expect(debris(home), `after the kill in push ${i}`).toEqual([]);
      const now = await servedTree(served.url);
      expect([...now.statuses], `push ${i}`).toEqual([200]);
      expect(now.releases.size, `push ${i}: releases served`).toBe(1);
      expect(now.markers.size, `push ${i}: markers served ${[...now.markers].join(', ')}`).toBe(1);
      const [m] = [...now.markers];
      // A push the host answered is live; one cut short is either live whole or not at all.
      expect(done ? [marker] : [live, marker], `push ${i}`).toContain(m);
      expect(fs.readlinkSync(home.hds)).toBe(`.ack-releases/HDS/${[...now.releases][0]}`);
      live = m!;
    }
    // Kills did cut pushes short (else this test would prove nothing about a crash).
    expect(outcomes.filter((done) => !done).length).toBeGreaterThan(0);
  }, 200_000);
});
