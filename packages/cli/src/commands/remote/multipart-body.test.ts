import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import busboy from 'busboy';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { useCleanups } from '../../test-support/cleanups.js';
import { workDir } from '../../test-support/work.js';
import { multipartBuffer, type FormPart } from './multipart-body.js';

// The batch body (docs/wire-formats.md "Sync batch") is built in one buffer of its exact size, each
// file read into its place: read back by busboy (the parser the host's multer drives), every field
// and file comes out as it went in, whatever the names, values, file names and contents.

const cleanups = useCleanups();

type ReadBack = { name: string; value: string } | { name: string; bytes: Buffer };

/** The parts as the host's parser reads the body; rejects where it refuses the form. */
function parsed(body: ReturnType<typeof multipartBuffer>): Promise<ReadBack[]> {
  return new Promise((resolve, reject) => {
    const parts: ReadBack[] = [];
    const parser = busboy({ headers: { 'content-type': body.contentType }, defParamCharset: 'utf8' });
    parser.on('field', (name, value) => parts.push({ name, value }));
    parser.on('file', (name, stream) => {
      const part: { name: string; bytes: Buffer } = { name, bytes: Buffer.alloc(0) };
      parts.push(part);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => (part.bytes = Buffer.concat(chunks)));
    });
    parser.on('error', reject).on('close', () => resolve(parts));
    parser.end(body.body as Uint8Array);
  });
}

/** A name as the body carries it: `"` and control characters as `%XX`. */
const encoded = (name: string) =>
  name.replace(/["\u0000-\u001f\u007f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('multipartBuffer', () => {
  it('reads back as the fields and files it was built from, with each file’s size and digest', async () => {
    const dir = workDir(cleanups);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({
              name: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
              value: fc.string({ unit: 'binary', maxLength: 40 }),
            }),
            fc.record({
              name: fc.constantFrom('file', 'filePath', 'ä', '名前'),
              // The local file's own name goes in the part's head: any character a file name may hold.
              base: fc
                .string({ unit: 'binary', minLength: 1, maxLength: 12 })
                .filter((b) => !/[/\0]/.test(b) && b !== '.' && b !== '..' && Buffer.byteLength(b) < 200),
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
            const folder = path.join(dir, `f${n++}`);
            fs.mkdirSync(folder);
            const file = path.join(folder, item.base);
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
          // Quotes and control characters in a name are sent percent-encoded (as browsers do with
          // quotes and line breaks) and read back so.
          expect(back.map((p) => p.name)).toEqual(parts.map((p) => encoded(p.name)));
          let file = 0;
          for (const [i, part] of parts.entries()) {
            if ('value' in part) expect(back[i]).toEqual({ name: encoded(part.name), value: part.value });
            else expect((back[i] as { bytes: Buffer }).bytes.equals(files[file++]!)).toBe(true);
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
