import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  createTestHome,
  fuzzOptions,
  rawConnection,
  startTestHost,
  testAppSettings,
  waitFor,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// Property-based test of the one-file upload (`PUT /wwwroot/api/sync/upload`, docs/wire-formats.md
// "Sync upload of one file"): what it parses of the outside is the query (moduleName, changeType,
// filePath, in any case, repeated, percent-encoded), the Content-Length and Content-Encoding, and a
// body that may be cut short or sent chunked. Whatever arrives: an answer in bounded time (or a
// client that left forgotten), never a 5xx, no temporary file left, nothing written outside the
// module's contract folder, and a 200 only for a whole body stored exactly as sent
// (docs/reliability.md "Fuzzing"; ACK_FUZZ_SEED / ACK_FUZZ_RUNS).

const TOKEN = 'team-token-1';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const MARK = 'fuzz-put:';

let host: TestHost;
let home: string;
let contracts: string;

beforeAll(async () => {
  const testHome = createTestHome(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot'], Security: { MaxContractSyncFileBytes: 4096 } },
      Kestrel: { Limits: { MaxRequestBodySize: 6000 } },
    }),
    { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } } },
  );
  home = testHome.home;
  contracts = path.join(home, 'contracts', 'wwwroot');
  fs.mkdirSync(path.join(contracts, 'HDS'), { recursive: true });
  host = await startTestHost(testHome, { wwwroot: wwwrootModule });
});

afterAll(async () => {
  await host.close();
  fs.rmSync(home, { recursive: true, force: true });
});

const segment = fc.oneof(
  fc.constantFrom('HDS', 'a.html', '..', '.', '', 'C:', '\\\\server', '.x.0a1b.ack-tmp', 'sub', '%2e%2e', 'ä.html'),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const filePath = fc
  .array(segment, { maxLength: 5 })
  .chain((parts) => fc.constantFrom('/', '\\').map((sep) => parts.join(sep)));
const moduleName = fc.oneof(fc.constantFrom('wwwroot', 'WWWROOT', ' wwwroot ', 'nosuch', 'transact', ''), fc.string());
const changeType = fc.oneof(fc.constantFrom('Changed', 'created', 'Deleted', 'Renamed', ''), fc.string());
const field = (name: string, value: fc.Arbitrary<string>) =>
  fc.tuple(fc.constantFrom(name, name.toUpperCase(), name.toLowerCase()), value);

/** Mostly a well-formed query (so that bodies are read), else anything: fields absent, repeated, noisy. */
const wellFormed = fc
  .tuple(
    field('moduleName', fc.constantFrom('wwwroot', 'WWWROOT')),
    field('changeType', fc.constantFrom('Changed', 'created')),
    field(
      'filePath',
      fc.oneof({ arbitrary: fc.constantFrom('HDS/a.html', 'HDS/sub/b.bin', '/HDS\\c.html'), weight: 3 }, filePath),
    ),
  )
  .chain((fields) => fc.shuffledSubarray(fields, { minLength: 3 }));
const anyFields = fc
  .tuple(
    fc.array(field('moduleName', moduleName), { maxLength: 2 }),
    fc.array(field('changeType', changeType), { maxLength: 2 }),
    fc.array(field('filePath', filePath), { maxLength: 2 }),
    fc.array(fc.tuple(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })), { maxLength: 2 }),
  )
  .chain((groups) => {
    const all = groups.flat();
    return fc.shuffledSubarray(all, { minLength: all.length });
  });

const caseArb = fc.record({
  fields: fc.oneof({ arbitrary: wellFormed, weight: 3 }, { arbitrary: anyFields, weight: 1 }),
  // Mostly within the limits (4096 for the file, 6000 for the body), sometimes past them.
  body: fc
    .oneof(
      { arbitrary: fc.uint8Array({ maxLength: 4000 }), weight: 3 },
      fc.uint8Array({ minLength: 4000, maxLength: 7000 }),
    )
    .map((b) => Buffer.concat([Buffer.from(MARK), Buffer.from(b)])),
  framing: fc.constantFrom('length', 'chunked', 'short', 'leave'),
  encoding: fc.constantFrom(undefined, 'identity', 'gzip', 'x-any'),
});
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

/** Temporary upload files (a folder may have such a name: a client named it). */
const leftovers = () =>
  fs
    .readdirSync(home, { recursive: true, encoding: 'utf8' })
    .filter((f) => isTemporaryFileName(path.basename(f)) && fs.lstatSync(path.join(home, f)).isFile());

/** Sends one case over a raw connection; the status, or `closed` when no answer came (or was awaited). */
async function send(c: Case): Promise<number | 'closed'> {
  const query = c.fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const conn = await rawConnection(host.url);
  const headers = [
    `PUT /wwwroot/api/sync/upload?${query} HTTP/1.1`,
    'Host: x',
    `Authorization: ${AUTH}`,
    ...(c.encoding ? [`Content-Encoding: ${c.encoding}`] : []),
    c.framing === 'chunked'
      ? 'Transfer-Encoding: chunked'
      : `Content-Length: ${c.body.length + (c.framing === 'length' ? 0 : 10)}`,
  ];
  conn.write(`${headers.join('\r\n')}\r\n\r\n`);
  if (c.framing === 'chunked') {
    for (let i = 0; i < c.body.length; i += 1500) {
      const chunk = c.body.subarray(i, i + 1500);
      conn.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    }
    conn.write('0\r\n\r\n');
  } else conn.write(c.body);
  if (c.framing === 'leave') {
    conn.destroy();
    return 'closed';
  }
  // A body declared longer than sent ('short') is answered once the host gives up on it: a refusal
  // that comes before the body's end, or none (the client then leaves, as a real one would).
  const text = await conn.until(/^HTTP\/1\.1 \d{3}[\s\S]*?\r\n\r\n/, c.framing === 'short' ? 300 : 8000);
  conn.destroy();
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return m ? Number(m[1]) : 'closed';
}

describe('PUT /wwwroot/api/sync/upload with generated requests', () => {
  it('answers every one without a 5xx, leaves no temporary file, stores only whole bodies inside the folder', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const status = await send(c);
        if (c.framing === 'length' || c.framing === 'chunked')
          expect(status, 'an answer for a whole request').not.toBe('closed');
        if (status !== 'closed') expect(status, 'no 5xx').toBeLessThan(500);
        if (status === 200) {
          expect(c.framing === 'length' || c.framing === 'chunked', 'a 200 only for a whole body').toBe(true);
          expect(c.encoding === undefined || c.encoding === 'identity', 'a 200 only for a body as it is').toBe(true);
        }
        await waitFor(() => leftovers().length === 0, { timeout: 5000, message: 'no temporary file left' });
      }),
      fuzzOptions(80),
    );
    // Every file a case wrote is inside a module's contract folder (any module name writes to
    // `contracts/<module>` when it has no folder of its own, docs/sync.md), and whole.
    const contractsRoot = path.join(home, 'contracts');
    const written = fs
      .readdirSync(home, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(home, f))
      .filter((f) => fs.lstatSync(f).isFile() && fs.readFileSync(f).subarray(0, MARK.length).toString() === MARK);
    for (const file of written) expect(file.startsWith(contractsRoot + path.sep), file).toBe(true);
  });

  it('stores a whole body exactly as sent, whatever its bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 4096 }),
        fc.constantFrom('length', 'chunked'),
        async (bytes, framing) => {
          const body = Buffer.from(bytes);
          const status = await send({
            fields: [
              ['moduleName', 'wwwroot'],
              ['changeType', 'Changed'],
              ['filePath', 'HDS/exact.bin'],
            ],
            body,
            framing: framing as Case['framing'],
            encoding: undefined,
          });
          expect(status).toBe(200);
          const stored = fs.readFileSync(path.join(contracts, 'HDS', 'exact.bin'));
          expect(createHash('sha256').update(stored).digest('hex')).toBe(
            createHash('sha256').update(body).digest('hex'),
          );
        },
      ),
      fuzzOptions(40),
    );
  });
});
