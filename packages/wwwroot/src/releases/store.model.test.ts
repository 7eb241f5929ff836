import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { ReleaseStore, type ReleaseStep } from './index.js';

// Model test of the release store (docs/releases.md "Crash safety"): random sequences of pushes,
// rollbacks and discards, any of them stopped at any step as a crash would stop it, then a fresh
// store recovers. After every command: exactly one whole release is live (its tree equals the
// model's tree for that id), and after recover no staging folder, temporary file or link is left.
// Replay with ACK_FUZZ_SEED / ACK_FUZZ_RUNS (docs/reliability.md "Fuzzing").

const STEPS: ReleaseStep[] = ['staged', 'renamed', 'manifest', 'temp-link', 'switched'];
class Crash extends Error {}

type Tree = Record<string, string>;
const fileName = fc.constantFrom('a.html', 'b.js', 'js/c.js', 'js/d/e.css', 'f.txt');
const command = fc.oneof(
  fc.record({
    kind: fc.constant('push' as const),
    put: fc.dictionary(fileName, fc.string({ maxLength: 4 }), { maxKeys: 3 }),
    remove: fc.array(fileName, { maxLength: 2 }),
    crashAt: fc.option(fc.constantFrom(...STEPS), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('rollback' as const),
    crashAt: fc.option(fc.constantFrom('manifest', 'temp-link', 'switched') as fc.Arbitrary<ReleaseStep>, {
      nil: undefined,
    }),
  }),
  fc.record({ kind: fc.constant('discard' as const) }),
);

function readTree(root: string): Tree {
  const out: Tree = {};
  const walk = (d: string, rel: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r);
      else out[r] = fs.readFileSync(path.join(d, e.name), 'utf8');
    }
  };
  walk(root, '');
  return out;
}

function debris(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (/\.staging$|\.ack-tmp$|\.ack-link$|\.by$/.test(e.name)) found.push(path.join(d, e.name));
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(dir);
  return found;
}

describe('release store model', () => {
  it('keeps exactly one whole release live through pushes, rollbacks and crashes at any step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 8 }), async (commands) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-releases-model-'));
        try {
          let crashAt: ReleaseStep | undefined;
          const make = () =>
            new ReleaseStore({
              contractDir: dir,
              keep: 3,
              graceMs: 0,
              afterStep: (s) => {
                if (s === crashAt) throw new Crash(s);
              },
            });
          let store = make();
          const trees = new Map<string, Tree>();
          let live: string | null = null;
          for (const c of commands) {
            crashAt = c.kind === 'discard' ? undefined : c.crashAt;
            let crashed = false;
            try {
              if (c.kind === 'push') {
                const s = await store.stage('HDS/');
                const tree: Tree = { ...(live ? trees.get(live) : {}) };
                for (const [rel, body] of Object.entries(c.put)) {
                  const full = path.join(s.dir, rel);
                  fs.rmSync(full, { recursive: true, force: true });
                  fs.mkdirSync(path.dirname(full), { recursive: true });
                  fs.writeFileSync(`${full}.ack-tmp`, body);
                  fs.renameSync(`${full}.ack-tmp`, full);
                  tree[rel] = body;
                }
                for (const rel of c.remove) {
                  if (tree[rel] === undefined) continue;
                  fs.rmSync(path.join(s.dir, rel));
                  delete tree[rel];
                }
                trees.set(s.id, tree);
                live = (await store.commit('HDS/', s.id)).id;
              } else if (c.kind === 'rollback') {
                live = (await store.rollback('HDS/')).id;
              } else {
                const s = await store.stage('HDS/');
                fs.writeFileSync(path.join(s.dir, 'half.html'), 'x');
                await store.discard('HDS/', s.id);
              }
            } catch (err) {
              if (!(err instanceof Crash) && (err as { code?: string }).code !== 'release.not_found') throw err;
              crashed = err instanceof Crash;
              // A switch that got past its rename is live; before it, the old release still is.
              if (err instanceof Crash && err.message === 'switched') {
                const target = fs.readlinkSync(path.join(dir, 'HDS'));
                live = path.basename(target);
              }
            }
            if (crashed) {
              store = make();
              crashAt = undefined;
              await store.recover();
              expect(debris(dir)).toEqual([]);
              // A first release cut off before its link: recover links it (the prefix had no
              // files; either way one whole release).
              if (live === null) live = (await store.list('HDS/')).find((r) => r.live)?.id ?? null;
            }
            const listed = await store.list('HDS/').catch(() => []);
            const lives = listed.filter((r) => r.live);
            if (live === null) {
              expect(lives).toEqual([]);
              continue;
            }
            expect(lives.map((r) => r.id)).toEqual([live]);
            expect(readTree(path.join(dir, 'HDS'))).toEqual(trees.get(live));
          }
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      fuzzOptions(60),
    );
  });
});
