// The sign-out file against what other processes do to it at the worst moment (docs/dev-sign-in.md
// "Sign-out holds"): a compaction elsewhere that renames a new file over the one an append just
// wrote to, a file removed under an append, a compaction that finds its file replaced before its
// own rename. The real file system does every operation; the one `stat` that a process checks
// with is wrapped so that the other process's step lands exactly before it, which no timing can
// make sure of. And the expiry instant, on a fixed clock: expired from it on, as the cookie is.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openRevocationFile, recordOf } from './revocation-file.js';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-signouts-races-'));
  dirs.push(dir);
  return path.join(dir, 'sign-outs');
}
function open(file: string, options: { compactAfter?: number; live?: () => number } = {}) {
  const seen: Array<[string, number]> = [];
  const handle = openRevocationFile(file, {
    compactAfter: options.compactAfter,
    onRecord: (id, exp) => seen.push([id, exp]),
    liveCount: options.live ?? (() => 0),
  });
  return { ...handle, seen, ids: () => seen.map(([id]) => id) };
}
const later = () => Date.now() + 3_600_000;
/** What a process opening the file now reads from it. */
async function idsIn(file: string): Promise<string[]> {
  const fresh = open(file);
  await fresh.refresh();
  return fresh.ids();
}
/** Another process renames a new file holding `ids` over `file` (its compaction). */
function replace(file: string, ids: string[]) {
  fs.writeFileSync(`${file}.other`, ids.map((id) => recordOf(id, later())).join(''));
  fs.renameSync(`${file}.other`, file);
}
/** Runs `step` just before each `fsp.stat` of `file` for which `when()` holds, then the real stat. */
function beforeStatOf(file: string, when: () => boolean, step: () => void): { calls: () => number } {
  const real = fsp.stat.bind(fsp);
  let calls = 0;
  vi.spyOn(fsp, 'stat').mockImplementation(((p: fs.PathLike, opts?: fs.StatOptions) => {
    if (p === file && when()) {
      calls++;
      step();
    }
    return real(p, opts);
  }) as typeof fsp.stat);
  return { calls: () => calls };
}

describe('an append racing another process', () => {
  it('appends again to the new file a compaction elsewhere renamed over the one it wrote to', async () => {
    const file = tempFile();
    fs.writeFileSync(file, recordOf('a', later()));
    const h = open(file);
    let once = true;
    beforeStatOf(
      file,
      () => once,
      () => {
        once = false;
        replace(file, ['a', 'b']);
      },
    );
    await h.append('signed-out', later());
    expect(await idsIn(file)).toEqual(['a', 'b', 'signed-out']);
  });

  it('appends again when the file was removed after its write', async () => {
    const file = tempFile();
    fs.writeFileSync(file, recordOf('a', later()));
    const h = open(file);
    let once = true;
    beforeStatOf(
      file,
      () => once,
      () => {
        once = false;
        fs.rmSync(file);
      },
    );
    await h.append('signed-out', later());
    expect(await idsIn(file)).toEqual(['signed-out']);
  });

  it('gives up with an error after five files replaced under it in a row, each given the record', async () => {
    const file = tempFile();
    const h = open(file);
    const replaced: string[] = [];
    const stats = beforeStatOf(
      file,
      () => true,
      () => {
        // The file just written to is set aside, as a compaction's rename would.
        const aside = `${file}.${replaced.length}`;
        fs.renameSync(file, aside);
        replaced.push(aside);
        fs.writeFileSync(file, '');
      },
    );
    const exp = later();
    await expect(h.append('signed-out', exp)).rejects.toThrow('the sign-out file kept being replaced while appending');
    expect(stats.calls()).toBe(5);
    expect(replaced).toHaveLength(5);
    for (const aside of replaced) expect(fs.readFileSync(aside, 'utf8')).toBe(recordOf('signed-out', exp));
  });
});

describe('a compaction racing another process', () => {
  it('leaves alone a file that replaced the one it read (a lock taken over as stale), and its own file behind', async () => {
    const file = tempFile();
    const past = Date.now() - 1000;
    fs.writeFileSync(file, Array.from({ length: 10 }, (_, i) => recordOf(`dead${i}`, past)).join(''));
    const h = open(file, { compactAfter: 1 });
    await h.refresh();
    const dir = path.dirname(file);
    // Its new file is written: another process replaces the one it read before its rename.
    let once = true;
    beforeStatOf(
      file,
      () => once && fs.readdirSync(dir).some((name) => name.endsWith('.tmp')),
      () => {
        once = false;
        replace(file, ['theirs']);
      },
    );
    await h.append('mine', later());
    expect(once).toBe(false);
    expect(await idsIn(file)).toEqual(['theirs']);
    expect(fs.readdirSync(dir)).toEqual(['sign-outs']);
  });
});

describe('the expiry instant in the sign-out file (fixed clock)', () => {
  // Whole seconds: a lock's modification time set from it reads back exactly.
  const now = Date.UTC(2026, 10, 29, 12);

  it('hands over no record at its expiry, and keeps none at it when compacting', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    const file = tempFile();
    fs.writeFileSync(
      file,
      Array.from({ length: 10 }, (_, i) => recordOf(`dead${i}`, now - 1000)).join('') +
        recordOf('at-expiry', now) +
        recordOf('a-millisecond-after', now + 1),
    );
    const h = open(file, { compactAfter: 1, live: () => 1 });
    await h.refresh();
    expect(h.seen).toEqual([['a-millisecond-after', now + 1]]);
    // Compacts (11 of 12 records are dead).
    await h.append('new', now + 60_000);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain('dead');
    expect(text).not.toContain('"at-expiry"');
    expect(text).toContain('"a-millisecond-after"');
  });

  it('takes over a lock only once it is older than the stale age, not at it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    const file = tempFile();
    fs.writeFileSync(file, Array.from({ length: 10 }, (_, i) => recordOf(`dead${i}`, now - 1000)).join(''));
    const lock = `${file}.lock`;
    fs.writeFileSync(lock, '');
    const at = new Date(now - 30_000);
    fs.utimesSync(lock, at, at);
    expect(fs.statSync(lock).mtimeMs).toBe(now - 30_000);
    const h = open(file, { compactAfter: 1 });
    await h.refresh();
    await h.append('x', now + 60_000);
    expect(fs.existsSync(lock)).toBe(true);
    vi.setSystemTime(now + 1);
    await h.append('y', now + 60_000); // removes the stale lock
    await h.append('z', now + 60_000); // compacts
    expect(fs.existsSync(lock)).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('dead');
    expect((await idsIn(file)).sort()).toEqual(['x', 'y', 'z']);
  });
});
