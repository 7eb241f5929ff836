// The sign-out file at its edges (docs/dev-sign-in.md "Sign-out holds"): which lines are records,
// garbage of any length, a file replaced, cut short or gone under a reader, reads asked for while
// one runs, when compaction runs and what it keeps, and records appended while it runs. Two
// handles on one path stand for two processes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { createLineReader, openRevocationFile, parseRecord, recordOf } from './revocation-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-signouts-edges-'));
  dirs.push(dir);
  return path.join(dir, 'sign-outs');
}
/** A handle whose `seen` is every record handed over, and whose live count the test sets. */
function open(file: string, options: { compactAfter?: number; chunkBytes?: number; live?: () => number } = {}) {
  const seen: Array<[string, number]> = [];
  const handle = openRevocationFile(file, {
    compactAfter: options.compactAfter,
    chunkBytes: options.chunkBytes,
    onRecord: (id, exp) => seen.push([id, exp]),
    liveCount: options.live ?? (() => 0),
  });
  return { ...handle, seen, ids: () => seen.map(([id]) => id) };
}
const line = (text: string) => parseRecord(Buffer.from(text));
const later = () => Date.now() + 3_600_000;

describe('a record of the sign-out file', () => {
  it('is a two-element array of a finite expiry and a token id of 1 to 256 characters', () => {
    expect(line('[5,"a"]')).toEqual(['a', 5]);
    expect(line(`[5,"${'i'.repeat(256)}"]`)).toEqual(['i'.repeat(256), 5]);
    expect(line(`[5,"${'i'.repeat(257)}"]`)).toBeUndefined();
    expect(line('[5,""]')).toBeUndefined();
    for (const bad of [
      '["a",5]',
      '[5]',
      '[5,"a",6]',
      '{"0":5,"1":"a"}',
      '[null,"a"]',
      '["5","a"]',
      '[5,7]',
      '[1e999,"a"]',
      '[5,"a"',
      'x',
      '',
    ]) {
      expect(line(bad), bad).toBeUndefined();
    }
  });

  it('is read back as written, whatever the id and expiry (fuzz)', () => {
    fc.assert(
      fc.property(
        fc
          .array(
            fc.oneof(fc.constantFrom('"', '\\', '\n', '\u0000', '\ud800', 'é', '😀', ']'), fc.string({ maxLength: 8 })),
            {
              minLength: 1,
              maxLength: 24,
            },
          )
          .map((parts) => parts.join(''))
          .filter((id) => id.length > 0),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        (id, exp) => {
          const written = recordOf(id, exp);
          expect(written.startsWith('\n')).toBe(true);
          expect(line(written.slice(1))).toEqual([id, Object.is(exp, -0) ? 0 : exp]);
        },
      ),
      fuzzOptions(100),
    );
  });
});

describe('the line reader', () => {
  const reader = () => {
    const out: Array<[string, number]> = [];
    return { r: createLineReader((id, exp) => out.push([id, exp])), out };
  };

  it('skips a line longer than any record to its end, even when what follows in it looks like a record', () => {
    const { r, out } = reader();
    r.feed(Buffer.from(`\n${'x'.repeat(4000)}`));
    r.feed(Buffer.from('[5,"inside"]'));
    r.feed(Buffer.from('\n[6,"next"]\n'));
    r.end();
    expect(out).toEqual([['next', 6]]);
    // In one chunk too.
    const one = reader();
    one.r.feed(Buffer.from(`\n${'y'.repeat(4000)}[5,"inside"]\n[6,"next"]`));
    one.r.end();
    expect(one.out).toEqual([['next', 6]]);
  });

  it('gives nothing of an over-long line at the end of what is in the file, even a tail that looks like a record', () => {
    // The rest of the line may still be being written: it is skipped once its end arrives.
    const { r, out } = reader();
    r.feed(Buffer.from(`\n${'x'.repeat(4000)}`));
    r.feed(Buffer.from('[5,"inside"]'));
    r.end();
    expect(out).toEqual([]);
    r.feed(Buffer.from('\n[6,"next"]'));
    r.end();
    expect(out).toEqual([['next', 6]]);
  });

  it('skips the rest of an over-long line that arrives with the next lines, and keeps the next record', () => {
    const { r, out } = reader();
    r.feed(Buffer.from(`\n${'x'.repeat(4000)}`));
    r.feed(Buffer.from('[5,"inside"]\n[6,"next"]\n'));
    expect(out).toEqual([['next', 6]]);
  });

  it('takes a record padded to the longest line a record may have, and nothing longer', () => {
    // 2 * 256 * 6 + 64 bytes: a 256-character id, every character escaped, and a number.
    const longest = 2 * 256 * 6 + 64;
    const padded = (length: number, id: string) => `[5,${' '.repeat(length - 3 - id.length - 3)}"${id}"]`;
    expect(padded(longest, 'ok')).toHaveLength(longest);
    const { r, out } = reader();
    for (const [length, id] of [
      [longest, 'ok'],
      [longest + 1, 'long'],
    ] as const) {
      r.feed(Buffer.from(`\n${padded(length, id)}`)); // kept: no newline after it yet
      r.feed(Buffer.from('\n'));
    }
    expect(out).toEqual([['ok', 5]]);
  });

  it('gives a whole last record at the end once, and keeps an unfinished one until it is whole', () => {
    const { r, out } = reader();
    r.feed(Buffer.from('\n[5,"a"]'));
    r.end();
    expect(out).toEqual([['a', 5]]);
    r.feed(Buffer.from('\n[6,"b'));
    r.end();
    expect(out).toEqual([['a', 5]]);
    r.feed(Buffer.from('"]'));
    r.end();
    r.end();
    expect(out).toEqual([
      ['a', 5],
      ['b', 6],
    ]);
    r.feed(Buffer.from('\n'));
    r.end();
    expect(out).toHaveLength(2);
  });

  it('joins a record split over many chunks, one byte each', () => {
    const { r, out } = reader();
    for (const b of Buffer.from('\n[7,"split"]\n[8,"two"]\n')) r.feed(Buffer.from([b]));
    r.end();
    expect(out).toEqual([
      ['split', 7],
      ['two', 8],
    ]);
  });
});

describe('a reader of the sign-out file', () => {
  it('reads a first record that has no newline before it (a file written by hand)', async () => {
    const file = tempFile();
    const until = later();
    fs.writeFileSync(file, `[${until},"first"]${recordOf('second', until)}`);
    const r = open(file);
    await r.refresh();
    expect(r.ids()).toEqual(['first', 'second']);
  });

  it('reads a file replaced by another that starts with the same records whole', async () => {
    // The same first bytes (more than the reader compares) and a later size: only the identity tells.
    const file = tempFile();
    const until = later();
    const first = recordOf('p'.repeat(100), until);
    fs.writeFileSync(file, first + recordOf('b', until));
    const r = open(file);
    await r.refresh();
    fs.writeFileSync(`${file}.new`, first + recordOf('c', until) + recordOf('d', until));
    fs.renameSync(`${file}.new`, file);
    await r.refresh();
    expect(r.ids()).toEqual(['p'.repeat(100), 'b', 'p'.repeat(100), 'c', 'd']);
  });

  it('reads a file cut shorter in place, its start kept, from its start', async () => {
    const file = tempFile();
    const until = later();
    const kept = recordOf('p'.repeat(100), until) + recordOf('b', until);
    fs.writeFileSync(file, kept + recordOf('c'.repeat(50), until));
    const r = open(file);
    await r.refresh();
    fs.truncateSync(file, Buffer.byteLength(kept));
    fs.appendFileSync(file, recordOf('d', until));
    await r.refresh();
    expect(r.ids().slice(3)).toEqual(['p'.repeat(100), 'b', 'd']);
  });

  it('stops a read where a file cut under it ends, and reads what is written after', async () => {
    const file = tempFile();
    const until = later();
    fs.writeFileSync(file, ['a', 'b', 'c', 'd'].map((id) => recordOf(id, until)).join(''));
    let cut = false;
    const seen: string[] = [];
    const r = openRevocationFile(file, {
      chunkBytes: 8,
      liveCount: () => 0,
      onRecord: (id) => {
        seen.push(id);
        // Cut while the read is under way (between two of its chunks).
        if (!cut) fs.truncateSync(file, 0);
        cut = true;
      },
    });
    await r.refresh();
    expect(seen).toEqual(['a']);
    fs.appendFileSync(file, recordOf('e', until));
    await r.refresh();
    expect(seen).toEqual(['a', 'e']);
  });

  it('reads a file replaced by another (a compaction elsewhere) whole, and one cut shorter', async () => {
    const file = tempFile();
    fs.writeFileSync(file, recordOf('a', later()) + recordOf('b', later()));
    const r = open(file, { chunkBytes: 5 });
    await r.refresh();
    expect(r.ids()).toEqual(['a', 'b']);
    // Same size, another file.
    fs.writeFileSync(`${file}.new`, recordOf('c', later()) + recordOf('d', later()));
    fs.renameSync(`${file}.new`, file);
    await r.refresh();
    expect(r.ids()).toEqual(['a', 'b', 'c', 'd']);
    // The same file, cut shorter and written again: read from its start.
    fs.truncateSync(file, 0);
    fs.appendFileSync(file, recordOf('e', later()));
    await r.refresh();
    expect(r.ids()).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Gone: nothing new, and no error.
    fs.rmSync(file);
    await r.refresh();
    expect(r.ids()).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('reads a file written again in place (same inode, longer than what it read) from its start', async () => {
    // A backup restored with `cp`, or a new file that got a freed inode number: the identity is
    // the same, the records before the reader's place are not.
    const file = tempFile();
    fs.writeFileSync(file, recordOf('a', later()) + recordOf('b', later()));
    const r = open(file);
    await r.refresh();
    const { ino } = fs.statSync(file);
    const restored = `${file}.backup`;
    fs.writeFileSync(restored, recordOf('c', later()) + recordOf('d', later()) + recordOf('e', later()));
    fs.copyFileSync(restored, file);
    expect(fs.statSync(file).ino).toBe(ino);
    await r.refresh();
    expect(r.ids()).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Its neighbour: the same file grown by an append is read on from the reader's place only.
    fs.appendFileSync(file, recordOf('f', later()));
    await r.refresh();
    expect(r.ids()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('fails a read it cannot make (not a missing file), and the next read after it still runs', async () => {
    const file = tempFile();
    const blocked = path.join(path.dirname(file), 'blocked');
    fs.writeFileSync(blocked, '');
    const r = open(path.join(blocked, 'sign-outs'));
    await expect(r.refresh()).rejects.toMatchObject({ code: 'ENOTDIR' });
    const good = open(file);
    fs.writeFileSync(file, recordOf('x', later()));
    // Three asked at once: each resolves once what was written before it was read.
    const first = good.refresh();
    fs.appendFileSync(file, recordOf('y', later()));
    const second = good.refresh();
    const third = good.refresh();
    await Promise.all([first, second, third]);
    expect(good.ids()).toEqual(['x', 'y']);
  });

  it('leaves no file open after appends, reads and a compaction', async () => {
    const file = tempFile();
    const openFiles = () => fs.readdirSync('/proc/self/fd').length;
    const h = open(file, { compactAfter: 1 });
    await h.refresh();
    const before = openFiles();
    for (let i = 0; i < 20; i++) await h.append(`id${i}`, i % 2 ? later() : Date.now() + 1);
    await new Promise((r) => setTimeout(r, 5));
    await h.refresh();
    await h.append('last', later()); // compacts: the short-lived half has expired
    await h.refresh();
    expect(fs.readFileSync(file, 'utf8')).not.toContain('"id0"');
    expect(openFiles()).toBe(before);
  });

  it('hands over records with their expiry, and none expired', async () => {
    const file = tempFile();
    const until = later();
    fs.writeFileSync(file, recordOf('live', until) + recordOf('dead', Date.now() - 1) + recordOf('now', Date.now()));
    const r = open(file);
    await r.refresh();
    expect(r.seen).toEqual([['live', until]]);
  });
});

describe('compaction of the sign-out file', () => {
  const fill = (file: string, dead: number, live: string[] = []) => {
    const past = Date.now() - 1000;
    fs.writeFileSync(
      file,
      Array.from({ length: dead }, (_, i) => recordOf(`dead${i}`, past)).join('') +
        live.map((id) => recordOf(id, later())).join(''),
    );
  };
  const compacted = (file: string) => !fs.readFileSync(file, 'utf8').includes('dead');

  it('runs once the dead records reach the threshold, not one before', async () => {
    for (const [dead, after, expected] of [
      [9, 10, false],
      [10, 10, true],
    ] as const) {
      const file = tempFile();
      fill(file, dead);
      const h = open(file, { compactAfter: after });
      await h.refresh();
      await h.append('new', later());
      expect(compacted(file), `${dead} dead, after ${after}`).toBe(expected);
    }
  });

  it('runs only when the dead records outnumber the live ones', async () => {
    for (const [live, expected] of [
      [10, false],
      [9, true],
    ] as const) {
      const file = tempFile();
      const ids = Array.from({ length: live }, (_, i) => `live${i}`);
      fill(file, 10, ids);
      // Read: 10 dead records and `live` live ones.
      const h = open(file, { compactAfter: 1, live: () => live });
      await h.refresh();
      await h.append('new', later());
      expect(compacted(file), `${live} live`).toBe(expected);
    }
  });

  it('keeps each live id once with its latest expiry, in a file of the same form only this user reads', async () => {
    const file = tempFile();
    const a1 = Date.now() + 60_000;
    const a2 = Date.now() + 120_000;
    fs.writeFileSync(file, recordOf('a', a2) + recordOf('b', a1) + recordOf('a', a1) + recordOf('old', Date.now() - 1));
    const h = open(file, { compactAfter: 1 });
    await h.refresh();
    const more = later();
    await h.append('c', more);
    // A line of its own first (a reader tells this file from another that got the same inode).
    const [header, ...records] = fs.readFileSync(file, 'utf8').split('\n').slice(1);
    expect(header).toMatch(/^\{"file":"[0-9a-f]{16}"\}$/);
    expect(records.map((r) => `\n${r}`).join('')).toBe(recordOf('a', a2) + recordOf('b', a1) + recordOf('c', more));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['sign-outs']);
    // Counted again from the new file: the next sign-out does not compact it again.
    const { ino } = fs.statSync(file);
    await h.append('d', more);
    expect(fs.statSync(file).ino).toBe(ino);
    const fresh = open(file);
    await fresh.refresh();
    expect(fresh.ids().sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps every live record of a large file, written in several batches', async () => {
    const file = tempFile();
    const ids = Array.from({ length: 9000 }, (_, i) => `live${i}`);
    fill(file, 9500, ids);
    const h = open(file, { compactAfter: 1, live: () => 9000 });
    await h.refresh();
    await h.append('new', later());
    const fresh = open(file);
    await fresh.refresh();
    expect(compacted(file)).toBe(true);
    expect(new Set(fresh.ids())).toEqual(new Set([...ids, 'new']));
    expect(fresh.seen).toHaveLength(9001);
  });

  it('carries over what another process appends while it runs', async () => {
    const file = tempFile();
    fill(file, 400);
    const compactor = open(file, { compactAfter: 1, chunkBytes: 64 });
    await compactor.refresh();
    const other = open(file);
    const appended: string[] = [];
    let compacting = true;
    const run = compactor.append('trigger', later()).finally(() => (compacting = false));
    // Appends one after another until the compaction is over (it reads 64 bytes a turn).
    for (let i = 0; compacting && i < 2000; i++) {
      await other.append(`late${i}`, later());
      appended.push(`late${i}`);
    }
    await run;
    await other.append('after', later());
    expect(compacted(file)).toBe(true);
    const fresh = open(file);
    await fresh.refresh();
    const found = new Set(fresh.ids());
    for (const id of [...appended, 'trigger', 'after']) expect(found.has(id), id).toBe(true);
    expect(appended.length).toBeGreaterThan(0);
  });
});
