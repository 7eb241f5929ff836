import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  createTestHome,
  fuzzOptions,
  multipartBody,
  rawPost,
  startTestHost,
  testAppSettings,
  waitFor,
  type FormPart,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// Property-based tests of the two multipart endpoints (sync upload and /contractsync) over
// HTTP/1.1 and HTTP/2, with bodies a broken or hostile client sends: parts in any order,
// duplicated or misplaced file parts, odd field names, broken boundaries, bodies cut at any byte,
// clients that leave mid-body. Whatever arrives: the host answers (or forgets a client that left)
// in bounded time, never with a 5xx, leaves no temporary file, and each target holds either its
// old bytes or one whole upload (docs/reliability.md "Fuzzing"; ACK_FUZZ_SEED / ACK_FUZZ_RUNS).

const TOKEN = 'team-token-1';
const HOST_KEY = 'team-host-key';
const OLD = 'old bytes';

let host: TestHost;
let home: string;

beforeAll(async () => {
  const testHome = createTestHome(
    testAppSettings({
      AppSettings: {
        LoadModules: ['wwwroot'],
        UseContractSync: true,
        HostAccessID: HOST_KEY,
        Security: { MaxContractSyncFileBytes: 4096 },
      },
      Kestrel: { Limits: { MaxRequestBodySize: 16_384 } },
    }),
    { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } } },
  );
  home = testHome.home;
  host = await startTestHost(testHome, { wwwroot: wwwrootModule }, {}, { tlsPort: 0 });
});

afterAll(async () => {
  await host.close();
  fs.rmSync(home, { recursive: true, force: true });
});

interface Endpoint {
  name: string;
  path: string;
  headers: Record<string, string>;
  fields: FormPart[];
  /** Files that one upload changes together (both or neither). */
  targets: string[];
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'sync upload',
    path: '/wwwroot/api/sync/upload',
    headers: { Authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
    fields: [
      { name: 'moduleName', content: 'wwwroot' },
      { name: 'changeType', content: 'Changed' },
      { name: 'filePath', content: 'HDS/page.html' },
    ],
    targets: ['contracts/wwwroot/HDS/page.html'],
  },
  {
    name: '/contractsync',
    path: '/contractsync',
    headers: { hostAccessID: createHash('sha256').update(HOST_KEY).digest('hex') },
    fields: [
      { name: 'moduleID', content: 'HDS' },
      { name: 'contractType', content: 'transact' },
      { name: 'destFilePath', content: 'HDS/page.json' },
      { name: 'changeType', content: 'Changed' },
    ],
    targets: ['contracts/transact/HDS/page.json', 'modules/HDS/Contracts/transact/HDS/page.json'],
  },
];

/** One generated request: its parts, how its body is broken, and how it is sent. */
interface Case {
  parts: FormPart[];
  closeBoundary: boolean;
  boundaryInHeader: 'same' | 'other' | 'none';
  /** Keep this many bytes of the body (as a fraction); 1 keeps all. */
  keep: number;
  /** true: the client declares the whole length and leaves after the cut; false: declares what it sends. */
  leave: boolean;
  /** Random bytes written over the body at a fraction of its length, or none. */
  noise: { at: number; bytes: Uint8Array } | null;
}

const name = fc.oneof(
  fc.constantFrom('file', 'FILE', 'upload', 'moduleName', 'filePath', 'changeType', 'destFilePath', 'moduleID'),
  fc.string({ maxLength: 12 }).filter((s) => !/["\r\n]/.test(s)),
);
const content = fc.oneof(
  fc.string({ maxLength: 64 }),
  fc.uint8Array({ maxLength: 6000 }).map((b) => Buffer.from(b)),
);
const part = fc.record(
  {
    name,
    content,
    filename: fc.oneof(fc.constant(undefined), fc.constantFrom('a.html', ''), fc.string({ maxLength: 8 })),
  },
  { requiredKeys: ['name', 'content'] },
);

function caseFor(endpoint: Endpoint): fc.Arbitrary<Case> {
  const wholeFile: FormPart = { name: 'file', filename: 'f.html', content: 'new bytes' };
  const parts = fc
    .tuple(
      fc.shuffledSubarray([...endpoint.fields, wholeFile]),
      fc.array(part, { maxLength: 4 }),
      fc.array(fc.nat(), { maxLength: 4 }),
    )
    .map(([known, extra, positions]) => {
      const all = [...known];
      extra.forEach((p, i) => all.splice((positions[i] ?? 0) % (all.length + 1), 0, p as FormPart));
      return all;
    });
  return fc.record({
    parts,
    closeBoundary: fc.boolean(),
    boundaryInHeader: fc.constantFrom('same', 'same', 'same', 'other', 'none'),
    keep: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
    leave: fc.boolean(),
    noise: fc.option(
      fc.record({
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
      }),
    ),
  }) as fc.Arbitrary<Case>;
}

function encode(c: Case): {
  body: Buffer;
  declared: number;
  contentType: string;
  noised: NoisedParts;
} {
  const built = multipartBody(c.parts, { close: c.closeBoundary });
  let body = built.body;
  let noised: NoisedParts = { fields: new Set(), files: [] };
  if (c.noise) {
    body = Buffer.from(body);
    const at = Math.floor(c.noise.at * body.length);
    const bytes = c.noise.bytes.subarray(0, Math.max(0, body.length - at));
    body.set(bytes, at);
    noised = noisedParts(c, built.body, body, built.boundary, at, at + bytes.length);
  }
  const contentType =
    c.boundaryInHeader === 'same'
      ? built.contentType
      : c.boundaryInHeader === 'other'
        ? 'multipart/form-data; boundary=somethingElse'
        : 'multipart/form-data';
  const cut = body.subarray(0, Math.floor(body.length * c.keep));
  return { body: cut, declared: c.leave ? body.length : cut.length, contentType, noised };
}

/** What noise written over a body changed of its parts, as a parser reading it would see. */
interface NoisedParts {
  /** Lower-cased names of text fields whose delimiter, head or value (or the next part's delimiter) it touched. */
  fields: Set<string>;
  /** The bytes a file part it touched may be read as: up to the next delimiter left whole. */
  files: Buffer[];
}

/**
 * Noise over a part's delimiter or head hides the part (its bytes join the part before, or the
 * preamble); over its value, changes the value. A field touched so cannot tell which target the
 * form names, and a file touched so is read as the noised bytes up to the next whole delimiter.
 */
function noisedParts(c: Case, clean: Buffer, body: Buffer, boundary: string, from: number, to: number): NoisedParts {
  const delimiter = `--${boundary}`;
  const starts: number[] = [];
  for (let at = clean.indexOf(delimiter); at >= 0; at = clean.indexOf(delimiter, at + 1)) starts.push(at);
  const out: NoisedParts = { fields: new Set(), files: [] };
  c.parts.forEach((part, i) => {
    // The part itself and the delimiter after it, whose loss joins the next part to it.
    const end = (starts[i + 1] ?? clean.length) + delimiter.length + 2;
    if (from >= end || to <= starts[i]!) return;
    if (part.filename === undefined) out.fields.add(part.name.toLowerCase());
    else {
      const head = body.indexOf('\r\n\r\n', starts[i]);
      const next = body.indexOf(`\r\n${delimiter}`, head + 4);
      if (head >= 0) out.files.push(body.subarray(head + 4, next < 0 ? body.length : next));
    }
  });
  return out;
}

const under = (relative: string) => path.join(home, relative);
const leftovers = () =>
  fs.readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(path.basename(f)));

function resetTargets(endpoint: Endpoint): void {
  for (const target of endpoint.targets) {
    fs.mkdirSync(path.dirname(under(target)), { recursive: true });
    fs.writeFileSync(under(target), OLD);
  }
}

/** The text of the first field (not a file) of this name, as the host reads fields (any case). */
const firstField = (c: Case, name: string) => {
  const part = c.parts.find((p) => p.filename === undefined && p.name.toLowerCase() === name.toLowerCase());
  return part === undefined ? undefined : Buffer.from(part.content).toString();
};

/**
 * Each target holds its old bytes or a whole file part that was sent; when the form names these
 * targets, all of them hold the same (both or neither). A generated form may name other targets (a
 * field sent with another value, say another `moduleID`: another pair of files), and that upload
 * is as good: these targets then only must not be cut.
 */
function expectWholeOrOld(endpoint: Endpoint, c: Case, status: number | 'closed', noised: NoisedParts): void {
  const now = endpoint.targets.map((t) => fs.readFileSync(under(t)));
  const sent = [...c.parts.filter((p) => p.filename !== undefined).map((p) => Buffer.from(p.content)), ...noised.files];
  const isOld = (b: Buffer) => b.toString() === OLD;
  for (const b of now) expect(isOld(b) || sent.some((s) => s.equals(b)), `a target after ${status}`).toBe(true);
  // Noise over a field that names a target leaves unknown which target the form names.
  if (endpoint.fields.some((f) => noised.fields.has(f.name.toLowerCase()))) return;
  const namesThese = endpoint.fields.every((f) => [undefined, f.content].includes(firstField(c, f.name)));
  const old = now.every(isOld);
  const whole = now.every((b) => b.equals(now[0]!)) && sent.some((s) => s.equals(now[0]!));
  if (namesThese) expect(old || whole, `targets after ${status}`).toBe(true);
  // A 200 wrote what the fields named: these targets, when every field names them.
  const everyField = endpoint.fields.every((f) => firstField(c, f.name) === f.content);
  if (status === 200 && everyField) expect(whole || (sent.some((s) => s.toString() === OLD) && old)).toBe(true);
}

/** Over HTTP/2: one stream, the body cut where the case says; a client that leaves cancels the stream. */
function h2Post(
  session: http2.ClientHttp2Session,
  endpoint: Endpoint,
  body: Buffer,
  declared: number,
  contentType: string,
  leave: boolean,
): Promise<number | 'closed'> {
  return new Promise((resolve) => {
    const headers = Object.fromEntries(Object.entries(endpoint.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const stream = session.request({
      ':method': 'POST',
      ':path': endpoint.path,
      'content-type': contentType,
      'content-length': String(declared),
      ...headers,
    });
    let status: number | 'closed' = 'closed';
    const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), 8000);
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('error', () => undefined);
    stream.on('data', () => undefined);
    stream.on('close', () => {
      clearTimeout(timer);
      resolve(status);
    });
    if (leave) {
      stream.write(body, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    } else stream.end(body);
  });
}

async function checkCase(
  endpoint: Endpoint,
  c: Case,
  send: (body: Buffer, declared: number, type: string) => Promise<number | 'closed'>,
) {
  resetTargets(endpoint);
  const { body, declared, contentType, noised } = encode(c);
  const status = await send(body, declared, contentType);
  if (!c.leave || declared === body.length) {
    expect(status, 'an answer in bounded time').not.toBe('closed');
    expect(status as number, 'no 5xx').toBeLessThan(500);
  }
  await waitFor(() => leftovers().length === 0, { timeout: 5000, message: 'no temporary file left' });
  expectWholeOrOld(endpoint, c, status, noised);
}

describe.each(ENDPOINTS)('$name with generated broken multipart bodies', (endpoint) => {
  it('over HTTP/1.1: an answer, no 5xx, no temporary file, old bytes or one whole upload', async () => {
    await fc.assert(
      fc.asyncProperty(caseFor(endpoint), (c) =>
        checkCase(endpoint, c, async (body, declared, type) => {
          const answer = await rawPost(
            host.url,
            endpoint.path,
            body,
            { ...endpoint.headers, 'Content-Type': type },
            { contentLength: declared, disconnect: c.leave && declared !== body.length, timeoutMs: 8000 },
          );
          return answer.status;
        }),
      ),
      fuzzOptions(60),
    );
  });

  it('over HTTP/2: the same properties on one connection', async () => {
    // One connection for as long as the host keeps it. A client that cancels streams faster than
    // nghttp2's rapid-reset guard allows (a burst of 1,000, then 33 a second: the cases that leave)
    // gets GOAWAY INTERNAL_ERROR: the host protecting itself, after which a client connects again.
    // Any other end of the connection, or that one before the burst was spent, fails the test.
    const goaways: number[] = [];
    let cancelled = 0;
    const connect = () => {
      const s = http2.connect(host.host.tlsUrl!, { rejectUnauthorized: false });
      s.on('error', () => undefined);
      s.on('goaway', (code: number) => goaways.push(code));
      return s;
    };
    let session = connect();
    const live = (leaves: boolean) => {
      if (session.closed || session.destroyed) {
        expect(goaways, 'the host ended the connection only by its rapid-reset guard').toEqual([
          http2.constants.NGHTTP2_INTERNAL_ERROR,
        ]);
        expect(cancelled, "and only after the guard's burst of cancelled streams").toBeGreaterThanOrEqual(1000);
        goaways.length = 0;
        cancelled = 0;
        session = connect();
      }
      if (leaves) cancelled++;
      return session;
    };
    try {
      await fc.assert(
        fc.asyncProperty(caseFor(endpoint), (c) =>
          checkCase(endpoint, c, async (body, declared, type) => {
            const leaves = c.leave && declared !== body.length;
            const status = await h2Post(live(leaves), endpoint, body, declared, type, leaves);
            if (status !== 'closed' || goaways.length === 0) return status;
            // The stream crossed the guard's GOAWAY, so the host never processed it: a client sends
            // it again on a new connection.
            session.close();
            return h2Post(live(leaves), endpoint, body, declared, type, leaves);
          }),
        ),
        fuzzOptions(60),
      );
    } finally {
      session.close();
    }
  });

  it('answers a valid upload cut at every byte with 4xx (or 200 once only the closing CRLF is missing)', async () => {
    const { body, contentType } = multipartBody([
      ...endpoint.fields,
      { name: 'file', filename: 'f', content: 'new bytes' },
    ]);
    for (let keep = 0; keep <= body.length; keep++) {
      const cut = body.subarray(0, keep);
      resetTargets(endpoint);
      const answer = await rawPost(host.url, endpoint.path, cut, { ...endpoint.headers, 'Content-Type': contentType });
      expect(answer.status, `cut at ${keep} of ${body.length}`).not.toBe('closed');
      if (answer.status === 200) expect(keep).toBeGreaterThanOrEqual(body.length - 2);
      else expect(answer.status as number, `cut at ${keep}`).toBeGreaterThanOrEqual(400);
      expect(answer.status as number).toBeLessThan(500);
      expectWholeOrOld(
        endpoint,
        { parts: [{ name: 'file', filename: 'f', content: 'new bytes' }] } as Case,
        answer.status,
        { fields: new Set(), files: [] },
      );
    }
    await waitFor(() => leftovers().length === 0, { timeout: 5000, message: 'no temporary file left' });
    expect((await fetch(`${host.url}/view/page.html`)).status).toBeLessThan(500);
  });
});
