import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { useCleanups } from '../../test-support/cleanups.js';
import { workDir } from '../../test-support/work.js';
import { multipartBuffer, type FormPart } from './multipart-body.js';

// The batch body (docs/wire-formats.md "Sync batch") is built in one buffer of its exact size, each
// file read into its place: read back by another multipart parser (the one `Response.formData`
// has), every field and file comes out as it went in, whatever the names, values and contents.

const cleanups = useCleanups();

/** The parts as a multipart parser other than ours reads the body. */
async function parsed(body: ReturnType<typeof multipartBuffer>) {
  const form = await new Response(body.body as Uint8Array, {
    headers: { 'Content-Type': body.contentType },
  }).formData();
  return Promise.all(
    [...form.entries()].map(async ([name, value]) =>
      typeof value === 'string' ? { name, value } : { name, bytes: Buffer.from(await value.arrayBuffer()) },
    ),
  );
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('multipartBuffer', () => {
  it('reads back as the fields and files it was built from, with each file’s size and digest', async () => {
    const dir = workDir(cleanups);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ name: fc.string({ minLength: 1, maxLength: 12 }), value: fc.string({ maxLength: 40 }) }),
            fc.record({
              name: fc.constantFrom('file', 'filePath', 'ä', '名前'),
              content: fc.uint8Array({ maxLength: 3000 }),
            }),
          ),
          { maxLength: 12 },
        ),
        async (items) => {
          const parts: FormPart[] = [];
          const files: Buffer[] = [];
          for (const item of items) {
            if ('value' in item) {
              parts.push(item);
              continue;
            }
            const file = path.join(dir, `f${n++}.bin`);
            fs.writeFileSync(file, item.content);
            files.push(Buffer.from(item.content));
            parts.push({ name: item.name, file });
          }
          const body = multipartBuffer(parts);
          expect(body.sent).toEqual(
            files.map((data, i) => ({
              file: (parts.filter((p) => 'file' in p)[i] as { file: string }).file,
              bytes: data.length,
              sha256: sha256(data),
            })),
          );
          const back = await parsed(body);
          // Quotes and line breaks in a name are sent percent-encoded, as browsers do, and read back.
          expect(back.map((p) => p.name)).toEqual(parts.map((p) => p.name));
          let file = 0;
          for (const [i, part] of parts.entries()) {
            if ('value' in part) expect(back[i]).toEqual({ name: part.name, value: part.value });
            else expect(back[i]!.bytes!.equals(files[file++]!)).toBe(true);
          }
        },
      ),
      fuzzOptions(150),
    );
  });

  it('sends a file as it is when the body is built, shorter or longer than before', () => {
    const dir = workDir(cleanups, { 'a.bin': Buffer.alloc(5000, 1), 'b.bin': 'bee' });
    const parts: FormPart[] = [
      { name: 'file', file: path.join(dir, 'a.bin') },
      { name: 'file', file: path.join(dir, 'b.bin') },
    ];
    for (const size of [10, 0, 9000]) {
      fs.writeFileSync(path.join(dir, 'a.bin'), Buffer.alloc(size, 2));
      const body = multipartBuffer(parts);
      expect(body.sent.map((s) => s.bytes)).toEqual([size, 3]);
      expect(body.sent[0]!.sha256).toBe(sha256(Buffer.alloc(size, 2)));
    }
  });

  it('refuses, naming it, a file that reads longer than its size every time; a missing file fails too', () => {
    // A kernel file: its size says 0, yet it reads as text.
    const growing = '/proc/self/status';
    const missing = path.join(workDir(cleanups), 'gone.bin');
    expect(() => multipartBuffer([{ name: 'file', file: growing }])).toThrow(
      expect.objectContaining({ path: growing, message: expect.stringContaining('kept growing') }),
    );
    expect(() => multipartBuffer([{ name: 'file', file: missing }])).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});
