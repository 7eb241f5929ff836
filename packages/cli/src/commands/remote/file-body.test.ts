import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../../test-support/cleanups.js';
import { workDir } from '../../test-support/work.js';
import { fileBody } from './file-body.js';

// The body of a one-file PUT (docs/wire-formats.md "Sync upload of one file"): exactly the bytes of
// the length it declared, hashed as they go, or a failure naming the file.

const cleanups = useCleanups();

/** Writes the body into a stream and returns what came out. */
async function drain(write: (out: PassThrough) => Promise<void>): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
  await write(out);
  out.end();
  return Buffer.concat(chunks);
}

describe('fileBody', () => {
  it('writes every byte of a file bigger than a chunk, in order, with its digest', async () => {
    const dir = workDir(cleanups, {});
    const data = Buffer.from(Array.from({ length: 9 * 1024 * 1024 + 5 }, (_, i) => (i * 31) % 251));
    fs.writeFileSync(path.join(dir, 'big.bin'), data);
    const body = await fileBody(path.join(dir, 'big.bin'));
    expect(body.bytes).toBe(data.length);
    expect((await drain(body.write)).equals(data)).toBe(true);
    expect(body.sent).toEqual([
      { file: path.join(dir, 'big.bin'), bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') },
    ]);
  });

  it('fails, naming the file, when it has another size than declared once it is read; the same size goes', async () => {
    const dir = workDir(cleanups, {});
    const file = path.join(dir, 'moving.bin');
    for (const [later, fails] of [
      [1000, true],
      [3000, true],
      [2000, false],
    ] as const) {
      fs.writeFileSync(file, Buffer.alloc(2000, 1));
      const body = await fileBody(file);
      fs.writeFileSync(file, Buffer.alloc(later, 2));
      const sent = drain(body.write);
      if (fails) {
        await expect(sent).rejects.toMatchObject({ path: file });
        expect(body.sent).toEqual([]);
      } else expect((await sent).equals(Buffer.alloc(2000, 2))).toBe(true);
    }
  });

  it('fails before anything is sent for a file that is not there', async () => {
    const dir = workDir(cleanups, {});
    await expect(fileBody(path.join(dir, 'missing.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
