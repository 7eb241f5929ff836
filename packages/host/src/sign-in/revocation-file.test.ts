import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRevocationFile, type RevocationFileOptions } from './revocation-file.js';

// The shared file of signed-out token ids (docs/dev-sign-in.md "Sign-out holds"). Two handles on
// one path stand for two processes: each keeps its own place in the file, as a process would.
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-signouts-'));
  dirs.push(dir);
  return path.join(dir, '.ack', 'sign-outs');
}
/** A process's handle on the file, with what it has read (`take()`: the records since the last take). */
function open(file: string, options: Omit<RevocationFileOptions, 'onRecord' | 'liveCount'> = {}) {
  const seen = new Map<string, number>();
  let fresh: Array<[string, number]> = [];
  const handle = openRevocationFile(file, {
    ...options,
    onRecord: (id, exp) => {
      seen.set(id, exp);
      fresh.push([id, exp]);
    },
    liveCount: () => [...seen.values()].filter((exp) => exp > Date.now()).length,
  });
  return {
    ...handle,
    seen,
    async refresh(): Promise<Array<[string, number]>> {
      await handle.refresh();
      const taken = fresh;
      fresh = [];
      return taken;
    },
  };
}
const ids = (records: Array<[string, number]>) => new Set(records.map(([id]) => id));

describe('the sign-out file', () => {
  it('gives a second process what the first appended, only once, and nothing expired', async () => {
    const file = tempFile();
    const a = open(file);
    const b = open(file);
    expect(await b.refresh()).toEqual([]); // no file yet
    const later = Date.now() + 60_000;
    await a.append('one', later);
    await a.append('gone', Date.now() - 1);
    expect(await b.refresh()).toEqual([['one', later]]);
    expect(await b.refresh()).toEqual([]);
    await a.append('two', later);
    expect(await b.refresh()).toEqual([['two', later]]);
  });

  it('leaves an unfinished last record for the next read, and skips one a crash tore', async () => {
    const file = tempFile();
    const later = Date.now() + 60_000;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `\n[${later},"whole"]\n[${later},"ha`);
    const reader = open(file);
    expect(await reader.refresh()).toEqual([['whole', later]]);
    // The write finishes: the record is read.
    fs.appendFileSync(file, `lf"]`);
    expect(await reader.refresh()).toEqual([['half', later]]);
    // A record torn for good, then another process appends after it.
    fs.appendFileSync(file, `\n[${later},"torn`);
    await open(file).append('after', later);
    expect(await reader.refresh()).toEqual([['after', later]]);
  });

  it('keeps every record appended by two processes while they compact, again and again', async () => {
    const file = tempFile();
    const a = open(file, { compactAfter: 4 });
    const b = open(file, { compactAfter: 4 });
    const kept: string[] = [];
    // Each process signs out in turn a long-lived cookie and three about to expire: these
    // keep making compaction worth it, so compactions run while the other process appends.
    const run = async (name: string, handle: ReturnType<typeof open>) => {
      for (let i = 0; i < 60; i++) {
        kept.push(`${name}${i}`);
        await Promise.all([
          handle.append(`${name}${i}`, Date.now() + 60_000),
          ...[1, 2, 3].map((j) => handle.append(`${name}-short${i}.${j}`, Date.now() + 5)),
        ]);
        await handle.refresh(); // as a request with a cookie this process does not know would
      }
    };
    await Promise.all([run('a', a), run('b', b)]);
    const found = ids(await open(file).refresh());
    for (const id of kept) expect(found.has(id), id).toBe(true);
    // Compacted: most of the 360 short-lived records are gone from the file itself.
    expect(fs.readFileSync(file, 'utf8').split('short').length).toBeLessThan(180);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it('does not compact while live records outnumber the expired ones', async () => {
    const file = tempFile();
    const now = Date.now();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const live = Array.from({ length: 20 }, (_, i) => `\n[${now + 60_000},"live${i}"]`).join('');
    fs.writeFileSync(file, `${live}\n[${now - 1},"old"]`);
    const handle = open(file, { compactAfter: 1 });
    await handle.refresh(); // the start-up read
    await handle.append('new', now + 60_000);
    expect(fs.readFileSync(file, 'utf8')).toContain('"old"');
  });

  it('takes over a lock left by a process that died while compacting', async () => {
    const file = tempFile();
    const now = Date.now();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Array.from({ length: 10 }, (_, i) => `\n[${now - 1000},"old${i}"]`).join(''));
    fs.writeFileSync(`${file}.lock`, '');
    const old = new Date(now - 120_000);
    fs.utimesSync(`${file}.lock`, old, old);
    const handle = open(file, { compactAfter: 2 });
    await handle.refresh(); // the start-up read
    await handle.append('x', now + 60_000); // finds the stale lock and removes it
    await handle.append('y', now + 60_000); // compacts
    expect(fs.readFileSync(file, 'utf8')).not.toContain('old');
  });

  it('leaves a fresh lock alone: another process is compacting', async () => {
    const file = tempFile();
    const now = Date.now();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Array.from({ length: 10 }, (_, i) => `\n[${now - 1000},"old${i}"]`).join(''));
    fs.writeFileSync(`${file}.lock`, '');
    const handle = open(file, { compactAfter: 2 });
    await handle.refresh(); // the start-up read
    await handle.append('x', now + 60_000);
    await handle.append('y', now + 60_000);
    expect(fs.readFileSync(file, 'utf8')).toContain('old');
    expect(fs.existsSync(`${file}.lock`)).toBe(true);
  });
});
