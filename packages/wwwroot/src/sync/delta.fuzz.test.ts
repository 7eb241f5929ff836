import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  fuzzOptions,
  multipartBody,
  rawPost,
  testAppSettings,
  useTestHosts,
  waitFor,
  type FormPart,
} from '@ack/host/test-support';
import { basicAuth, countingWwwroot } from '../test-support/test-fixture.js';

// Property-based tests of the two parsers the delta adds (docs/sync.md "The delta"): the listing's
// query and the batch form. Whatever arrives: a 2xx or a 4xx problem, never a 5xx or a hang; the
// listing never names a file outside the module folder; no temporary file is left behind. A batch
// cut at any byte by an HTTP/2 stream reset stores nothing unless its closing boundary came, and
// then only whole files (docs/sync.md "Interrupted writes"). A well-formed batch does exactly what
// a model of its form says: fields paired by the order sent whatever their spelling, files
// committed in the order sent (a file and a folder of one name), a symbolic link that loops
// refused for its entry alone, and no folder made for an entry that is refused.
// Replay with ACK_FUZZ_SEED / ACK_FUZZ_RUNS (docs/reliability.md "Fuzzing").

const TOKEN = 'fuzz-token';
const AUTH = { Authorization: basicAuth(TOKEN) };
const hosts = useTestHosts();

async function start() {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot'], Security: { MaxContractSyncFileBytes: 256 } },
      Kestrel: { Limits: { MaxRequestBodySize: 8192 } },
    }),
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'contracts/wwwroot/HDS/a.html': 'a',
      'secret/key.txt': 'secret',
    },
  );
  const contracts = path.join(home.home, 'contracts', 'wwwroot');
  fs.symlinkSync(path.join(home.home, 'secret'), path.join(contracts, 'HDS', 'out'));
  fs.symlinkSync(path.join(home.home, 'secret', 'key.txt'), path.join(contracts, 'key-link'));
  const { wwwroot, inFlight } = countingWwwroot();
  return { ...(await hosts.start(home, { wwwroot }, {}, { tlsPort: 0 })), contracts, inFlight };
}

const segment = fc.constantFrom(
  'HDS',
  '..',
  '.',
  '',
  'out',
  'key-link',
  'a.html',
  'C:',
  '%00',
  '%2e%2e',
  '\\',
  'x y',
  'ü',
);
const relPath = fc
  .tuple(fc.array(segment, { maxLength: 5 }), fc.constantFrom('/', '\\'))
  .map(([s, sep]) => s.join(sep));

describe('sync delta fuzz', () => {
  it('the listing answers any query with NDJSON of contained files or a 4xx problem', async () => {
    const h = await start();
    const realRoot = fs.realpathSync(h.contracts);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          module: fc.oneof(fc.constantFrom('wwwroot', 'WWWROOT', 'transact', '', 'nope'), fc.string({ maxLength: 8 })),
          prefix: fc.oneof(relPath, fc.string({ maxLength: 20 })),
          extra: fc.string({ maxLength: 10 }),
        }),
        async ({ module, prefix, extra }) => {
          const query = `moduleName=${encodeURIComponent(module)}&prefix=${encodeURIComponent(prefix)}&${encodeURIComponent(extra)}`;
          const res = await fetch(`${h.url}/wwwroot/api/sync/list?${query}`, { headers: AUTH });
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          if (res.status !== 200) {
            expect(res.headers.get('content-type')).toContain('application/problem+json');
            return;
          }
          const lines = text
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { path?: string; done?: boolean });
          expect(lines.at(-1)!.done).toBe(true);
          for (const line of lines.slice(0, -1)) {
            const real = fs.realpathSync(path.join(h.contracts, line.path!));
            expect(real.startsWith(realRoot + path.sep)).toBe(true);
          }
          expect(text).not.toContain('key.txt');
        },
      ),
      fuzzOptions(150),
    );
  });

  it('the batch answers any form with per-entry outcomes or a 4xx problem, leaving no temporary file', async () => {
    const h = await start();
    const part: fc.Arbitrary<FormPart> = fc.oneof(
      fc.record({ name: fc.constant('moduleName'), content: fc.constantFrom('wwwroot', 'nope', '') }),
      fc.record({ name: fc.constantFrom('filePath', 'FILEPATH', 'deletePath'), content: relPath }),
      fc.record({
        name: fc.constantFrom('file', 'File', 'other'),
        content: fc.string({ maxLength: 300 }),
        filename: fc.constantFrom('f.bin', '../x', ''),
      }),
      fc.record({
        name: fc.string({ maxLength: 6 }).filter((n) => !/["\r\n]/.test(n)),
        content: fc.string({ maxLength: 20 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 12 }), fc.boolean(), async (parts, close) => {
        const { body, contentType } = multipartBody(parts, { close });
        const answer = await rawPost(h.url, '/wwwroot/api/sync/batch', body, { ...AUTH, 'Content-Type': contentType });
        expect(answer.status).not.toBe('closed');
        expect(answer.status as number).toBeLessThan(500);
        if (answer.status === 200) {
          const results = (JSON.parse(answer.body) as { results: Array<{ ok: boolean; status?: number }> }).results;
          for (const r of results) if (!r.ok) expect(r.status).toBeLessThan(500);
        } else expect(answer.headers['content-type']).toContain('application/problem+json');
        const left = fs
          .readdirSync(h.contracts, { recursive: true, encoding: 'utf8' })
          .filter((f) => isTemporaryFileName(path.basename(f)));
        expect(left).toEqual([]);
        expect(fs.readFileSync(path.join(h.contracts, '..', '..', 'secret', 'key.txt'), 'utf8')).toBe('secret');
      }),
      fuzzOptions(150),
    );
  });

  it('a batch cut at any byte by an HTTP/2 stream reset stores nothing but whole files of a whole form', async () => {
    const h = await start();
    const dir = path.join(h.contracts, 'HDS');
    const names = ['a.html', 'b.html', 'sub/c.html', 'sub/d.bin'];
    const batchArb = fc.record({
      files: fc.uniqueArray(
        fc.record({ name: fc.constantFrom(...names), content: fc.uint8Array({ maxLength: 3000 }) }),
        { minLength: 1, maxLength: 4, selector: (f) => f.name },
      ),
      // Anywhere, or within the last bytes (the last file's end, its delimiter, the closing boundary).
      cut: fc.oneof(
        fc.record({ fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
        fc.record({ fromEnd: fc.nat(80) }),
      ),
      // The reset at once, or once the host has read what was sent.
      resetAfterMs: fc.constantFrom(0, 0, 30),
    });
    // One connection, renewed now and then: nghttp2 ends one on which a client resets too many streams.
    let session: http2.ClientHttp2Session | undefined;
    let used = 0;
    const connect = () => {
      if (session && used++ % 200 !== 0) return session;
      session?.close();
      session = http2.connect(h.host.tlsUrl!, { rejectUnauthorized: false });
      session.on('error', () => undefined);
      return session;
    };
    try {
      await fc.assert(
        fc.asyncProperty(batchArb, async ({ files, cut: where, resetAfterMs }) => {
          fs.rmSync(dir, { recursive: true, force: true });
          fs.mkdirSync(dir, { recursive: true });
          fs.writeFileSync(path.join(dir, 'a.html'), 'a');
          const parts: FormPart[] = [{ name: 'moduleName', content: 'wwwroot' }];
          for (const f of files)
            parts.push(
              { name: 'filePath', content: `HDS/${f.name}` },
              { name: 'file', filename: 'f', content: Buffer.from(f.content) },
            );
          const { body, contentType } = multipartBody(parts);
          const cut =
            'fraction' in where ? Math.floor(where.fraction * body.length) : Math.max(0, body.length - where.fromEnd);
          await new Promise<void>((resolve) => {
            const stream = connect().request({
              ':method': 'POST',
              ':path': '/wwwroot/api/sync/batch',
              authorization: AUTH.Authorization,
              'content-type': contentType,
            });
            stream.on('error', () => undefined);
            stream.on('close', resolve);
            stream.resume();
            stream.write(body.subarray(0, cut), () =>
              setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), resetAfterMs),
            );
          });
          await waitFor(() => h.inFlight() === 0, { message: 'the batch ended' });
          const left = fs
            .readdirSync(dir, { recursive: true, encoding: 'utf8' })
            .filter((f) => isTemporaryFileName(path.basename(f)));
          expect(left).toEqual([]);
          // Before the closing boundary `--boundary--` came, the form is cut: nothing of it is stored.
          const whole = cut >= body.length - 2;
          for (const name of names) {
            const file = path.join(dir, name);
            const now = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
            const sent = files.find((f) => f.name === name)?.content;
            const old = name === 'a.html' ? Buffer.from('a') : undefined;
            if (whole && sent && now && Buffer.from(sent).equals(now)) continue;
            expect(now, `${name} after a cut at ${cut} of ${body.length}`).toEqual(old);
          }
        }),
        fuzzOptions(25),
      );
    } finally {
      session?.close();
    }
  });

  it('a well-formed batch does what a model of its form says, entry by entry, in the order sent', async () => {
    const h = await start();
    const spell = (name: string) => fc.constantFrom(name, name.toUpperCase(), name.toLowerCase());
    const entry = fc.oneof(
      fc.record({
        kind: fc.constant('file' as const),
        field: spell('filePath'),
        segments: fc.array(fc.constantFrom('a', 'b', 'loop'), { minLength: 1, maxLength: 3 }),
        content: fc.string({ maxLength: 300 }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        field: spell('deletePath'),
        segments: fc.array(fc.constantFrom('a', 'b', 'loop'), { minLength: 1, maxLength: 3 }),
        content: fc.constant(''),
      }),
    );
    const caseArb = fc.record({
      module: spell('moduleName'),
      before: fc.subarray(['a', 'b/a']),
      entries: fc.array(entry, { minLength: 1, maxLength: 8 }),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ module, before, entries }) => {
        const root = `R${run++}`;
        const dir = path.join(h.contracts, root);
        fs.mkdirSync(dir);
        fs.symlinkSync('loop', path.join(dir, 'loop'));
        // The model: files and folders under the case's folder.
        const files = new Map<string, string>();
        const folders = new Set<string>();
        const addFile = (rel: string, content: string) => {
          files.set(rel, content);
          const segs = rel.split('/');
          for (let i = 1; i < segs.length; i++) folders.add(segs.slice(0, i).join('/'));
        };
        for (const rel of before) {
          fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
          fs.writeFileSync(path.join(dir, rel), 'before');
          addFile(rel, 'before');
        }
        const parts: FormPart[] = [{ name: module, content: 'wwwroot' }];
        for (const e of entries) {
          parts.push({ name: e.field, content: `${root}/${e.segments.join('/')}` });
          if (e.kind === 'file') parts.push({ name: 'file', filename: 'f', content: e.content });
        }
        const { body, contentType } = multipartBody(parts);
        const answer = await rawPost(h.url, '/wwwroot/api/sync/batch', body, { ...AUTH, 'Content-Type': contentType });
        expect(answer.status, answer.body).toBe(200);
        const results = (JSON.parse(answer.body) as { results: Array<Record<string, unknown>> }).results;
        // What the model expects, files in the order sent, then deletions.
        const expected: Array<Record<string, unknown>> = [];
        const deleted: string[][] = [];
        const fileAbove = (segs: string[]) =>
          segs.slice(0, -1).some((_, i) => files.has(segs.slice(0, i + 1).join('/')));
        for (const e of [...entries.filter((x) => x.kind === 'file'), ...entries.filter((x) => x.kind === 'delete')]) {
          const rel = e.segments.join('/');
          const shown = { path: `${root}/${rel}` };
          if (e.segments[0] === 'loop') expected.push({ ...shown, ok: false, status: 409 });
          else if (e.kind === 'file') {
            if (Buffer.byteLength(e.content) > 256) expected.push({ ...shown, ok: false, status: 413 });
            else if (fileAbove(e.segments)) expected.push({ ...shown, ok: false, status: 409 });
            else if (folders.has(rel)) expected.push({ ...shown, ok: false, status: 400, code: 'sync.not_a_file' });
            else {
              expected.push({ ...shown, ok: true, change: files.has(rel) ? 'Changed' : 'Created' });
              addFile(rel, e.content);
            }
          } else if (folders.has(rel)) expected.push({ ...shown, ok: false, status: 400, code: 'sync.not_a_file' });
          else {
            expected.push({ ...shown, ok: true, change: 'Deleted', existed: files.has(rel) });
            files.delete(rel);
            deleted.push(e.segments);
          }
        }
        // Once every entry is done, the folders the deletions emptied go too (docs/sync.md
        // "Batches"), deepest first.
        for (const segs of deleted)
          for (let i = segs.length - 1; i >= 1; i--) {
            const folder = segs.slice(0, i).join('/');
            const under = (p: string) => p.startsWith(`${folder}/`);
            if ([...files.keys()].some(under) || [...folders].some(under)) break;
            folders.delete(folder);
          }
        expect(results.map((r) => ({ ...r, detail: undefined, sha256: undefined, refresh: undefined }))).toMatchObject(
          expected,
        );
        // The disk is the model: its files with their bytes, and no other file or folder.
        const onDisk = fs
          .readdirSync(dir, { recursive: true, encoding: 'utf8' })
          .map((f) => f.split(path.sep).join('/'))
          .filter((f) => f !== 'loop')
          .sort();
        expect(onDisk).toEqual([...new Set([...files.keys(), ...folders])].sort());
        for (const [rel, content] of files) expect(fs.readFileSync(path.join(dir, rel), 'utf8')).toBe(content);
      }),
      fuzzOptions(100),
    );
  });
});
