import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Response } from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DigestCache } from './digest-cache.js';
import { streamListing, walkContained } from './listing.js';

// The listing's walk and stream as functions (docs/sync.md "The listing"): which files a listing
// names, in which order, with which size and digest, and how it ends. The same over HTTP is in
// listing-walk.test.ts; these run in process so that mutation testing can afford them.

let root: string;
let scratch: string;
beforeEach(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-listing-core-'));
  root = path.join(scratch, 'contract');
  fs.mkdirSync(root);
});
afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

const sha = (data: string) => createHash('sha256').update(data).digest('hex');
function put(files: Record<string, string>) {
  for (const [name, data] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), data);
  }
}
async function walk(start = root, from = root) {
  const slices: Array<{ dir: string; base: string; names: string[]; sizes: number[] }> = [];
  for await (const s of walkContained(from, start)) {
    slices.push({ dir: s.dir, base: s.base, names: s.names, sizes: s.stats.map((st) => Number(st.size)) });
  }
  return slices;
}
const paths = (slices: Awaited<ReturnType<typeof walk>>) => slices.flatMap((s) => s.names.map((n) => s.base + n));

/** A response as the listing uses it; `highWaterMark` small so that it waits for drains. */
class Collected extends Writable {
  statusCode = 0;
  readonly headers: Record<string, string> = {};
  readonly writes: string[] = [];
  constructor(
    private readonly delayMs = 0,
    highWaterMark = 16 * 1024,
  ) {
    super({ highWaterMark, decodeStrings: false });
  }
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  override _write(chunk: string, _enc: BufferEncoding, done: () => void) {
    this.writes.push(String(chunk));
    if (this.delayMs > 0) setTimeout(done, this.delayMs);
    else setImmediate(done);
  }
  get text() {
    return this.writes.join('');
  }
  lines() {
    return this.text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}
const list = (res: Collected, cache = new DigestCache(), start = root, trailer: Record<string, unknown> = { t: 1 }) =>
  streamListing(res as unknown as Response, root, start, cache, trailer);

describe('the listing walk, in process', () => {
  it('names every file once, sorted by path, a folder where its name sorts, with sizes', async () => {
    put({ 'b.txt': 'bb', 'b/c.txt': 'c', 'a/x/y.txt': 'yyy', 'a.txt': '', 'ab/z': 'z', 'B.txt': 'B' });
    const slices = await walk();
    expect(paths(slices)).toEqual(['B.txt', 'a/x/y.txt', 'a.txt', 'ab/z', 'b/c.txt', 'b.txt']);
    expect(slices.map((s) => s.base)).toEqual(['', 'a/x/', '', 'ab/', 'b/', '']);
    expect(slices.flatMap((s) => s.sizes)).toEqual([1, 3, 0, 1, 1, 2]);
    expect(slices[1]!.dir).toBe(path.join(root, 'a', 'x'));
    expect(slices[0]!.dir).toBe(root);
  });

  it('sorts names as JavaScript compares strings (UTF-16 code units), not as their UTF-8 bytes sort', async () => {
    // The folder hands names over in byte order (U+FF21 is EF BC A1, U+1F600 is F0 9F 98 80); the
    // listing's order is the one a client sorting the same paths in JavaScript gets.
    put({
      '\uFF21.txt': 'a',
      '\u{1F600}.txt': 'b',
      'z.txt': 'c',
      'a.txt': 'c',
      '\uFF42.txt': 'c',
      '\u{1F642}.txt': 'c',
      'd/\uFF21': 'd',
      'd/\u{1F600}': 'e',
    });
    const listed = paths(await walk());
    expect(listed).toEqual([
      'a.txt',
      'd/\u{1F600}',
      'd/\uFF21',
      'z.txt',
      '\u{1F600}.txt',
      '\u{1F642}.txt',
      '\uFF21.txt',
      '\uFF42.txt',
    ]);
    expect(listed).toEqual([...listed].sort());
  });

  it('walks from a folder, a file, a root given with a trailing separator; nothing from outside or from nothing', async () => {
    put({ 'HDS/in/a.html': 'a', 'HDS/z.html': 'z', 'top.txt': 't' });
    expect(paths(await walk(path.join(root, 'HDS')))).toEqual(['HDS/in/a.html', 'HDS/z.html']);
    expect(paths(await walk(`${path.join(root, 'HDS')}${path.sep}`))).toEqual(['HDS/in/a.html', 'HDS/z.html']);
    const one = await walk(path.join(root, 'HDS', 'in', 'a.html'));
    expect(one).toEqual([{ dir: path.join(root, 'HDS', 'in'), base: 'HDS/in/', names: ['a.html'], sizes: [1] }]);
    expect(paths(await walk(`${root}${path.sep}`, `${root}${path.sep}`))).toEqual([
      'HDS/in/a.html',
      'HDS/z.html',
      'top.txt',
    ]);
    expect(await walk(path.join(root, 'missing'))).toEqual([]);
    expect(await walk(root, path.join(scratch, 'no-root'))).toEqual([]);
    fs.writeFileSync(path.join(scratch, 'outside.txt'), 'o');
    expect(await walk(path.join(scratch, 'outside.txt'))).toEqual([]);
    // A sibling whose name starts with the root's is outside too.
    fs.mkdirSync(`${root}-2`);
    fs.writeFileSync(path.join(`${root}-2`, 'f'), 'f');
    expect(await walk(`${root}-2`)).toEqual([]);
    expect(await walk(path.join(`${root}-2`, 'f'))).toEqual([]);
  });

  it('leaves out temporary upload files, links that leave the root, dangling links and loops; never enters a linked folder', async () => {
    put({ 'in/a.txt': 'a', 'z.txt': 'z' });
    fs.writeFileSync(path.join(root, '.z.txt.0a1b2c3d4e5f1.ack-tmp'), 'half');
    fs.writeFileSync(path.join(scratch, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(scratch, 'secret.txt'), path.join(root, 'out.txt'));
    fs.symlinkSync(path.join(root, 'in', 'a.txt'), path.join(root, 'link.txt'));
    fs.symlinkSync(path.join(root, 'in'), path.join(root, 'alias'));
    fs.symlinkSync(path.join(root, 'gone'), path.join(root, 'dangling'));
    fs.symlinkSync(path.join(root, 'loop'), path.join(root, 'loop'));
    fs.symlinkSync(path.join(scratch), path.join(root, 'up'));
    expect(paths(await walk())).toEqual(['in/a.txt', 'link.txt', 'z.txt']);
    // A temporary file named as the start is not listed; a linked folder named as the start is walked.
    expect(await walk(path.join(root, '.z.txt.0a1b2c3d4e5f1.ack-tmp'))).toEqual([]);
    expect(paths(await walk(path.join(root, 'alias')))).toEqual(['alias/a.txt']);
    expect(await walk(path.join(root, 'out.txt'))).toEqual([]);
    expect(await walk(path.join(root, 'up'))).toEqual([]);
    expect(paths(await walk(path.join(root, 'link.txt')))).toEqual(['link.txt']);
    // The root itself a link: its real path is what files are compared with.
    fs.symlinkSync(root, path.join(scratch, 'root-link'));
    expect(paths(await walk(path.join(scratch, 'root-link'), path.join(scratch, 'root-link')))).toEqual([
      'in/a.txt',
      'link.txt',
      'z.txt',
    ]);
  });

  it('cuts a big folder into slices of 256 files and gives the event loop turns meanwhile', async () => {
    const names = Array.from({ length: 520 }, (_, i) => `f${String(i).padStart(4, '0')}`);
    for (const n of names) fs.writeFileSync(path.join(root, n), n);
    put({ 'sub/a': 'a' });
    let turns = 0;
    let walking = true;
    const tick = () => {
      if (!walking) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const slices: string[][] = [];
    const turnsAt: number[] = [];
    for await (const s of walkContained(root, root)) {
      slices.push(s.names.map((n) => s.base + n));
      turnsAt.push(turns);
    }
    walking = false;
    expect(slices.map((s) => s.length)).toEqual([256, 256, 8, 1]);
    expect(slices.flat()).toEqual([...names, 'sub/a']);
    // The loop had a turn between two slices of the same folder: 256 stats do not run as one.
    expect(turnsAt[1]!).toBeGreaterThan(turnsAt[0]!);
    expect(turnsAt[2]!).toBeGreaterThan(turnsAt[1]!);
  });

  it('goes on past a folder removed while the walk runs, and lists a file named like a missing value once', async () => {
    put({ 'a.txt': 'a', 'b/one': '1', 'c/two': '2', 'd/undefined': 'u', 'e.txt': 'e' });
    const seen: string[] = [];
    for await (const s of walkContained(root, root)) {
      seen.push(...s.names.map((n) => s.base + n));
      // After the first slice: `c` goes before the walk reads it.
      if (seen.length === 1) fs.rmSync(path.join(root, 'c'), { recursive: true });
    }
    expect(seen).toEqual(['a.txt', 'b/one', 'd/undefined', 'e.txt']);
  });

  it('reads a folder once: files added while its slices are walked never make a file listed twice', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `f${String(i).padStart(4, '0')}`);
    for (const n of names) fs.writeFileSync(path.join(root, n), n);
    const seen: string[] = [];
    for await (const s of walkContained(root, root)) {
      // After the first slice, names that sort before, among and after those still to come.
      if (seen.length === 0) put({ a0: 'a', f0260b: 'b', z9: 'z' });
      seen.push(...s.names);
    }
    // Each once, in order, as the folder was when the walk read it (the next listing has the rest).
    expect(seen).toEqual(names);
  });

  it('names nothing when the start is neither a file nor a folder', async () => {
    const socket = net.createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(root, 'pipe'), resolve));
    try {
      expect(await walk(path.join(root, 'pipe'))).toEqual([]);
      expect(await walk()).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    }
  });

  it('lists files beside many folders in order, each folder where it sorts', async () => {
    const files: Record<string, string> = {};
    const expected: string[] = [];
    for (let i = 0; i < 30; i++) {
      const d = `d${String(i).padStart(2, '0')}`;
      files[`${d}/inner/x`] = 'x';
      files[`${d}.txt`] = 't';
      expected.push(`${d}/inner/x`, `${d}.txt`);
    }
    put(files);
    fs.mkdirSync(path.join(root, 'empty'));
    expect(paths(await walk())).toEqual(expected);
  });
  it('lists a prefix linked to its live release as that folder, never the release store itself', async () => {
    // docs/releases.md "Layout on disk": `HDS -> .ack-releases/HDS/<release>`, manifests beside.
    put({
      'a.txt': 'a',
      '.ack-releases/HDS/r-1/SYS/SYS010.html': 'sys',
      '.ack-releases/HDS/r-1/index.html': 'index',
      '.ack-releases/HDS/r-1.json': '{}',
      '.ack-releases/HDS/r-0/old.html': 'old',
      'sub/.ack-releases/kept.txt': 'kept',
    });
    fs.symlinkSync(path.join('.ack-releases', 'HDS', 'r-1'), path.join(root, 'HDS'));
    // A link to a file of the store is a file like any other; a link to a folder outside it is not entered.
    fs.symlinkSync(path.join('.ack-releases', 'HDS', 'r-1.json'), path.join(root, 'manifest'));
    fs.symlinkSync('sub', path.join(root, 'other'));
    const expected = ['HDS/SYS/SYS010.html', 'HDS/index.html', 'a.txt', 'manifest', 'sub/.ack-releases/kept.txt'];
    expect(paths(await walk())).toEqual(expected);
    const res = new Collected();
    await list(res);
    expect(res.lines().map((l) => l.path ?? l.done)).toEqual([...expected, true]);
    // From the link itself, its files under its name.
    expect(paths(await walk(path.join(root, 'HDS')))).toEqual(['HDS/SYS/SYS010.html', 'HDS/index.html']);
  });
});

describe('the listing stream, in process', () => {
  it('writes one line per file with size and SHA-256, then the closing line with counts and the trailer', async () => {
    put({ 'a.txt': 'hello', 'd/b.bin': 'xy', 'e.txt': '', undefined: 'u' });
    const res = new Collected();
    await list(res, new DigestCache(), root, { module: 'm', prefix: '' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.writableEnded).toBe(true);
    expect(res.text.endsWith('\n')).toBe(true);
    expect(res.lines()).toEqual([
      { path: 'a.txt', size: 5, sha256: sha('hello') },
      { path: 'd/b.bin', size: 2, sha256: sha('xy') },
      { path: 'e.txt', size: 0, sha256: sha('') },
      { path: 'undefined', size: 1, sha256: sha('u') },
      { done: true, files: 4, bytes: 8, module: 'm', prefix: '' },
    ]);
  });

  it('an empty folder is the closing line alone', async () => {
    const res = new Collected();
    await list(res);
    expect(res.lines()).toEqual([{ done: true, files: 0, bytes: 0, t: 1 }]);
  });

  it('keeps the order when known and new digests mix, and gives the same lines from the cache', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`f${String(i).padStart(2, '0')}`] = `data ${i}`.repeat(i + 1);
    put(files);
    const cache = new DigestCache();
    // Half the files known: every other one listed once before.
    for (let i = 0; i < 40; i += 2)
      await list(new Collected(), cache, path.join(root, `f${String(i).padStart(2, '0')}`));
    const first = new Collected();
    await list(first, cache);
    const expected = Object.entries(files).map(([p, d]) => ({ path: p, size: d.length, sha256: sha(d) }));
    const bytes = expected.reduce((n, e) => n + e.size, 0);
    expect(first.lines()).toEqual([...expected, { done: true, files: 40, bytes, t: 1 }]);
    const again = new Collected();
    await list(again, cache);
    expect(again.text).toBe(first.text);
    // A file changed since is hashed again.
    fs.writeFileSync(path.join(root, 'f00'), 'changed!');
    const third = new Collected();
    await list(third, cache);
    expect(third.lines()[0]).toEqual({ path: 'f00', size: 8, sha256: sha('changed!') });
  });

  it('leaves out a file that cannot be read when it is hashed, and does not count it', async () => {
    put({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
    const cache = new (class extends DigestCache {
      override digest(absolute: string, stat: fs.BigIntStats, base: string) {
        if (absolute.endsWith('b.txt')) fs.rmSync(absolute); // gone between the walk and the read
        return super.digest(absolute, stat, base);
      }
    })();
    const res = new Collected();
    await list(res, cache);
    expect(res.lines()).toEqual([
      { path: 'a.txt', size: 1, sha256: sha('a') },
      { path: 'c.txt', size: 1, sha256: sha('c') },
      { done: true, files: 2, bytes: 2, t: 1 },
    ]);
  });

  it('sends a long listing in chunks, waiting for a slow reader, and every line arrives', async () => {
    // Long names make lines of ~300 bytes: 600 files are over 64 KiB, more than one chunk.
    const long = 'n'.repeat(200);
    for (let i = 0; i < 600; i++) fs.writeFileSync(path.join(root, `${long}${String(i).padStart(3, '0')}`), `${i}`);
    const cache = new DigestCache();
    await list(new Collected(), cache); // known from now on: lines are written at once
    for (const known of [true, false]) {
      const res = new Collected(2, 1024);
      await list(res, known ? cache : new DigestCache());
      expect(res.writes.length).toBeGreaterThan(2);
      expect(res.writes.slice(0, -1).every((w) => w.length >= 64 * 1024)).toBe(true);
      expect(res.writes.slice(0, -1).every((w) => w.length < 64 * 1024 + 400)).toBe(true);
      const lines = res.lines();
      expect(lines).toHaveLength(601);
      expect(lines.at(-1)).toMatchObject({ done: true, files: 600 });
      expect(lines[599]).toEqual({ path: `${long}599`, size: 3, sha256: sha('599') });
    }
  });

  it('ends when a client that stopped reading is gone, and leaves no listener on the response', async () => {
    const long = 'n'.repeat(200);
    for (let i = 0; i < 600; i++) fs.writeFileSync(path.join(root, `${long}${String(i).padStart(3, '0')}`), `${i}`);
    // Reads nothing: the listing waits for a drain that never comes, until the client is gone.
    const stuck = new (class extends Collected {
      override _write() {}
    })(0, 1024);
    stuck.on('error', () => {});
    const before = { drain: stuck.listenerCount('drain'), close: stuck.listenerCount('close') };
    // Gone while the listing waits for a drain (not before: then it would not be waiting).
    stuck.on('newListener', (event) => event === 'drain' && setImmediate(() => stuck.destroy()));
    await expect(list(stuck)).rejects.toThrow('client gone');
    expect(stuck.listenerCount('drain')).toBe(before.drain);
    // A reader that keeps up: every wait's listeners are taken off again.
    const res = new Collected(0, 1024);
    const closeBefore = res.listenerCount('close');
    await list(res);
    expect(res.listenerCount('drain')).toBe(0);
    expect(res.listenerCount('close')).toBe(closeBefore);
  });

  it('stops when the client is gone, before writing more', async () => {
    const long = 'n'.repeat(200);
    for (let i = 0; i < 600; i++) fs.writeFileSync(path.join(root, `${long}${String(i).padStart(3, '0')}`), `${i}`);
    const res = new Collected(5, 1024);
    res.once('drain', () => res.destroy());
    res.on('error', () => {});
    await expect(list(res)).rejects.toThrow('client gone');
    expect(res.text).not.toContain('"done"');
  });
});
