import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/fuzz.js';
import { writeOffThread } from './off-thread-write.js';

// The upload write thread (docs/sync.md "One big file"): what reaches the file and the digest is
// exactly the body, however it is cut into chunks; a limit, a failed write or a failed body stops
// it, and then the thread no longer touches the descriptor, which the caller closes.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-off-thread-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
let n = 0;
const freshFd = () => {
  const file = path.join(dir, `f${n++}`);
  return { file, fd: fs.openSync(file, 'wx') };
};
const options = (maxBytes = Infinity, chunksOwned = true) => ({
  maxBytes,
  tooLarge: () => Object.assign(new Error('too large'), { code: 'TOO_LARGE' }),
  flushEvery: 256 * 1024,
  chunksOwned,
});

describe('writeOffThread', () => {
  it('writes and hashes exactly the body, however it is cut, and leaves memory it does not own alone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ size: fc.integer({ min: 0, max: 300_000 }) }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 255 }),
        async (parts, seed) => {
          const whole = Buffer.from(
            Array.from({ length: parts.reduce((s, p) => s + p.size, 0) }, (_, i) => (i * 31 + seed) % 256),
          );
          const expected = { bytes: whole.length, sha256: sha(whole) };
          const copies = Buffer.from(whole);
          // Views of one buffer (not the body's own: copied) ...
          const views: Buffer[] = [];
          // ... and chunks each with memory of its own (moved).
          const owned: Buffer[] = [];
          let at = 0;
          for (const { size } of parts) {
            views.push(whole.subarray(at, at + size));
            owned.push(Buffer.from(whole.subarray(at, at + size)));
            at += size;
          }
          for (const [chunks, chunksOwned] of [
            [views, false],
            [owned, true],
          ] as const) {
            const { file, fd } = freshFd();
            try {
              const result = await writeOffThread(fd, Readable.from(chunks), options(Infinity, chunksOwned));
              expect(result).toEqual(expected);
            } finally {
              fs.closeSync(fd);
            }
            expect(fs.readFileSync(file).equals(copies)).toBe(true);
          }
          // The buffer the views share is untouched, whole as it was.
          expect(whole.equals(copies)).toBe(true);
        },
      ),
      fuzzOptions(60),
    );
  });

  it("moves a body's own chunks to the thread rather than copying them; copies them otherwise", async () => {
    for (const chunksOwned of [true, false]) {
      const chunk = Buffer.from(Buffer.alloc(64 * 1024, 0x61));
      const { fd } = freshFd();
      try {
        await writeOffThread(fd, Readable.from([chunk]), options(Infinity, chunksOwned));
      } finally {
        fs.closeSync(fd);
      }
      expect(chunk.byteLength).toBe(chunksOwned ? 0 : 64 * 1024);
    }
  });

  it('stops at one byte over the limit with its error; the file holds no more than the limit', async () => {
    const { file, fd } = freshFd();
    const body = [Buffer.alloc(4096, 1), Buffer.alloc(4096, 2)];
    await expect(writeOffThread(fd, Readable.from(body), options(8191))).rejects.toMatchObject({ code: 'TOO_LARGE' });
    fs.closeSync(fd);
    expect(fs.statSync(file).size).toBeLessThanOrEqual(8191);
    // Its neighbour, exactly at the limit, is taken.
    const next = freshFd();
    await expect(writeOffThread(next.fd, Readable.from(body), options(8192))).resolves.toMatchObject({ bytes: 8192 });
    fs.closeSync(next.fd);
  });

  it('ends with the write error (ENOSPC on a full device), stops reading the body, and the next job works', async () => {
    const fd = fs.openSync('/dev/full', 'w');
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled++;
        this.push(Buffer.alloc(64 * 1024, 0x7a));
      },
    });
    await expect(writeOffThread(fd, endless, options())).rejects.toMatchObject({ code: 'ENOSPC', syscall: 'write' });
    fs.closeSync(fd);
    expect(endless.destroyed).toBe(true);
    // At most what the thread may hold in flight was read past the failure.
    expect(pulled * 64 * 1024).toBeLessThan(64 * 1024 * 1024);
    const { file, fd: next } = freshFd();
    await writeOffThread(next, Readable.from([Buffer.from('after')]), options());
    fs.closeSync(next);
    expect(fs.readFileSync(file, 'utf8')).toBe('after');
  });

  it("ends with the body's own error when the body fails midway", async () => {
    const { fd } = freshFd();
    const failing = new Readable({ read() {} });
    failing.push(Buffer.alloc(2 * 1024 * 1024, 1));
    setTimeout(() => failing.destroy(new Error('client gone')), 20);
    await expect(writeOffThread(fd, failing, options())).rejects.toThrow('client gone');
    fs.closeSync(fd);
  });

  it('writes several bodies at once, each into its own file', async () => {
    const bodies = [0x31, 0x32, 0x33].map((b, i) => Buffer.alloc(3 * 1024 * 1024 + i, b));
    const files = bodies.map(() => freshFd());
    const results = await Promise.all(
      bodies.map((body, i) =>
        writeOffThread(
          files[i]!.fd,
          Readable.from(
            Array.from({ length: 50 }, (_, k) => body.subarray((k * body.length) / 50, ((k + 1) * body.length) / 50)),
          ),
          options(),
        ),
      ),
    );
    for (const [i, body] of bodies.entries()) {
      fs.closeSync(files[i]!.fd);
      expect(results[i]).toEqual({ bytes: body.length, sha256: sha(body) });
      expect(fs.readFileSync(files[i]!.file).equals(body)).toBe(true);
    }
  });

  it('writes many bodies at once, past the bound on what all of them may hold in flight together, each whole', async () => {
    // 48 bodies of 1.5 MiB arriving at once: 72 MiB, more than the thread lets wait on it in all.
    const bodies = Array.from({ length: 48 }, (_, i) => Buffer.alloc(1536 * 1024 + i, i));
    const files = bodies.map(() => freshFd());
    const chunked = (body: Buffer) =>
      Readable.from(
        Array.from({ length: 24 }, (_, k) =>
          Buffer.from(body.subarray(k * 65536, (k + 1) * 65536 + (k === 23 ? 64 : 0))),
        ),
      );
    const results = await Promise.all(bodies.map((body, i) => writeOffThread(files[i]!.fd, chunked(body), options())));
    for (const [i, body] of bodies.entries()) {
      fs.closeSync(files[i]!.fd);
      expect(results[i]).toEqual({ bytes: body.length, sha256: sha(body) });
      expect(fs.readFileSync(files[i]!.file).equals(body)).toBe(true);
    }
  });
});
