import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { rawRequest, startWwwroot, type RawResponse, type WwwrootFixture } from '../test-support/test-fixture.js';

// Range and conditional headers against a real listening host (docs/static-files.md "Responses"):
// whatever the client sends, never a 5xx; a 206 is the exact slice it announces; a 416 says
// `bytes */size`; a 304 has no body. Files held in memory, streamed from disk, and empty.
// Seeded and replayable (ACK_FUZZ_SEED, ACK_FUZZ_RUNS; a failure prints its seed).

const ROOT = 'modules/wwwroot/wwwroot';
const FILES = {
  '/small.txt': crypto.randomBytes(1000).toString('hex'), // 2,000 bytes, held in memory
  '/big.bin': crypto.randomBytes(150 * 1024), // streamed from disk
  '/empty.txt': '',
};
type Name = keyof typeof FILES;

let t: WwwrootFixture;
const bytes = new Map<Name, Buffer>();
const validators = new Map<Name, { etag: string; lastModified: string }>();

beforeAll(async () => {
  t = await startWwwroot({
    files: Object.fromEntries(Object.entries(FILES).map(([name, body]) => [`${ROOT}${name}`, body])),
  });
  for (const name of Object.keys(FILES) as Name[]) {
    const content = FILES[name];
    bytes.set(name, Buffer.isBuffer(content) ? content : Buffer.from(content));
    const head = await rawRequest(t.url, name, { method: 'HEAD' });
    validators.set(name, { etag: head.headers.etag!, lastModified: head.headers['last-modified']! });
  }
});
afterAll(() => t?.close());

/** Header text a client can send (Node refuses control characters in a header value). */
const printable = fc.stringMatching(/^[ -~]{0,40}$/);
const huge = fc.stringMatching(/^[1-9][0-9]{15,40}$/);
const position = fc.oneof(
  fc.nat({ max: 2100 }),
  fc.nat({ max: 160_000 }),
  fc.constantFrom(0, 1, 1999, 2000, 2001, 153_599, 153_600, 153_601),
);
const pos = fc.oneof({ weight: 5, arbitrary: position.map(String) }, { weight: 1, arbitrary: huge });
const spec = fc.oneof(
  fc.tuple(pos, pos).map(([a, b]) => `${a}-${b}`),
  pos.map((a) => `${a}-`),
  pos.map((n) => `-${n}`),
  fc.constantFrom('-', '', 'a-b', '1-2-3', '-0', ' 5 - 9 ', '0x10-0x20', '1e3-2e3', '--1', '5-4'),
);
const rangeHeader = fc.oneof(
  { weight: 6, arbitrary: fc.array(spec, { minLength: 1, maxLength: 4 }).map((s) => `bytes=${s.join(',')}`) },
  { weight: 1, arbitrary: fc.array(spec, { minLength: 1, maxLength: 2 }).map((s) => `BYTES=${s.join(',')}`) },
  { weight: 1, arbitrary: spec.map((s) => `items=${s}`) },
  { weight: 1, arbitrary: printable },
  { weight: 1, arbitrary: fc.constantFrom('bytes=', 'bytes', '=0-1', 'bytes 0-1', 'bytes=0-1;', 'bytes=,0-1') },
);

interface Request {
  name: Name;
  method: 'GET' | 'HEAD';
  range: string | undefined;
  ifNoneMatch: string | undefined;
  ifModifiedSince: string | undefined;
  ifRange: string | undefined;
  ifMatch: string | undefined;
}

/** Validators drawn around the file's own: its ETag (strong, weak, in a list), its date, others, junk. */
function validatorsOf(name: Name) {
  const { etag, lastModified } = validators.get(name)!;
  const seconds = Date.parse(lastModified);
  const tag = fc.oneof(
    fc.constant(etag),
    fc.constant(`W/${etag}`),
    fc.constant('*'),
    fc.stringMatching(/^[0-9a-f]{1,8}-[0-9a-f]{1,12}$/).map((s) => `"${s}"`),
    fc
      .array(fc.oneof(fc.constant(etag), fc.constant('"other"'), fc.constant('W/"x"')), { minLength: 1 })
      .map((l) => l.join(', ')),
    printable,
  );
  const date = fc.oneof(
    fc.constant(lastModified),
    fc.integer({ min: -10_000_000, max: 10_000_000 }).map((d) => new Date(seconds + d * 1000).toUTCString()),
    fc.constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'not a date', '', '0', 'Sun, 06 Nov 1994 08:49:37 GMT'),
    printable,
  );
  return { tag, date };
}

const request: fc.Arbitrary<Request> = fc
  .constantFrom(...(Object.keys(FILES) as Name[]))
  .chain((name) => {
    const { tag, date } = validatorsOf(name);
    return fc.record({
      name: fc.constant(name),
      method: fc.constantFrom<'GET' | 'HEAD'>('GET', 'GET', 'GET', 'HEAD'),
      range: fc.option(rangeHeader, { freq: 4 }),
      ifNoneMatch: fc.option(tag, { freq: 2 }),
      ifModifiedSince: fc.option(date, { freq: 2 }),
      ifRange: fc.option(fc.oneof(tag, date), { freq: 2 }),
      ifMatch: fc.option(tag, { freq: 2 }),
    });
  })
  .map((r) => ({
    name: r.name,
    method: r.method,
    range: r.range ?? undefined,
    ifNoneMatch: r.ifNoneMatch ?? undefined,
    ifModifiedSince: r.ifModifiedSince ?? undefined,
    ifRange: r.ifRange ?? undefined,
    ifMatch: r.ifMatch ?? undefined,
  }));

function send(r: Request): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (r.range !== undefined) headers.Range = r.range;
  if (r.ifNoneMatch !== undefined) headers['If-None-Match'] = r.ifNoneMatch;
  if (r.ifModifiedSince !== undefined) headers['If-Modified-Since'] = r.ifModifiedSince;
  if (r.ifRange !== undefined) headers['If-Range'] = r.ifRange;
  if (r.ifMatch !== undefined) headers['If-Match'] = r.ifMatch;
  return rawRequest(t.url, r.name, { method: r.method, headers });
}

/** What every answer must satisfy, whatever was asked. */
function checkAnswer(r: Request, res: RawResponse): void {
  const file = bytes.get(r.name)!;
  const size = file.length;
  expect([200, 206, 304, 412, 416]).toContain(res.status);
  // If-Match comes first: a strong tag listed (or *) lets the request on, anything else is 412.
  const etag = validators.get(r.name)!.etag;
  const otherVersion =
    r.ifMatch !== undefined && r.ifMatch.trim() !== '*' && !r.ifMatch.split(',').some((c) => c.trim() === etag);
  expect(res.status === 412, 'a 412 exactly when If-Match names another version').toBe(otherVersion);
  if (res.status === 412) {
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    return;
  }
  if (res.status === 304) {
    expect(res.body.length).toBe(0);
    expect(res.headers.etag).toBe(validators.get(r.name)!.etag);
    // Only a validator can make a 304.
    expect(r.ifNoneMatch !== undefined || r.ifModifiedSince !== undefined).toBe(true);
    return;
  }
  if (r.ifNoneMatch !== undefined && r.ifNoneMatch.trim() === '*') throw new Error('If-None-Match: * must be a 304');
  if (res.status === 416) {
    expect(r.range).toBeDefined();
    expect(res.headers['content-range']).toBe(`bytes */${size}`);
    expect(res.body.length).toBe(0);
    return;
  }
  const head = r.method === 'HEAD';
  if (res.status === 206) {
    expect(r.method).toBe('GET');
    expect(r.range).toBeDefined();
    const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.headers['content-range'] ?? '');
    expect(match, res.headers['content-range']).not.toBeNull();
    const [start, end, total] = [Number(match![1]), Number(match![2]), Number(match![3])];
    expect(total).toBe(size);
    expect(start).toBeLessThanOrEqual(end);
    expect(end).toBeLessThan(size);
    expect(Number(res.headers['content-length'])).toBe(end - start + 1);
    expect(res.body.equals(file.subarray(start, end + 1))).toBe(true);
    return;
  }
  // 200: the whole file.
  expect(Number(res.headers['content-length'])).toBe(size);
  expect(res.headers['content-range']).toBeUndefined();
  expect(head ? res.body.length === 0 : res.body.equals(file)).toBe(true);
}

describe('Range and conditional headers over HTTP', () => {
  it('never answer 5xx; 206 is the exact slice, 416 says bytes */size, 304 has no body', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        checkAnswer(r, await send(r));
      }),
      fuzzOptions(),
    );
  });

  it('answer one plain range with exactly that slice when no validator intervenes', async () => {
    const plain = fc
      .constantFrom<Name>('/small.txt', '/big.bin')
      .chain((name) =>
        fc
          .tuple(fc.nat({ max: bytes.get(name)!.length * 2 }), fc.nat({ max: bytes.get(name)!.length * 2 }))
          .map(([a, b]) => ({ name, first: Math.min(a, b), last: Math.max(a, b) })),
      );
    await fc.assert(
      fc.asyncProperty(plain, async ({ name, first, last }) => {
        const file = bytes.get(name)!;
        const res = await rawRequest(t.url, name, { headers: { Range: `bytes=${first}-${last}` } });
        if (first >= file.length) {
          expect(res.status).toBe(416);
          return;
        }
        const end = Math.min(last, file.length - 1);
        expect(res.status).toBe(206);
        expect(res.headers['content-range']).toBe(`bytes ${first}-${end}/${file.length}`);
        expect(res.body.equals(file.subarray(first, end + 1))).toBe(true);
      }),
      fuzzOptions(100),
    );
  });
});

describe('Range corner cases found by the fuzz', () => {
  it('a suffix longer than the file is the whole file as a 206, not a 416', async () => {
    for (const name of ['/small.txt', '/big.bin'] as const) {
      const file = bytes.get(name)!;
      const res = await rawRequest(t.url, name, { headers: { Range: `bytes=-${file.length + 1}` } });
      expect(res.status, name).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes 0-${file.length - 1}/${file.length}`);
      expect(res.body.equals(file)).toBe(true);
      // The neighbours: a suffix as long as the file, and one of nothing (never satisfiable).
      const exact = await rawRequest(t.url, name, { headers: { Range: `bytes=-${file.length}` } });
      expect(exact.status).toBe(206);
      expect(exact.body.equals(file)).toBe(true);
      const none = await rawRequest(t.url, name, { headers: { Range: 'bytes=-0' } });
      expect(none.status).toBe(416);
      expect(none.headers['content-range']).toBe(`bytes */${file.length}`);
    }
    // An empty file satisfies no range at all.
    const empty = await rawRequest(t.url, '/empty.txt', { headers: { Range: 'bytes=-5' } });
    expect(empty.status).toBe(416);
    expect(empty.headers['content-range']).toBe('bytes */0');
  });

  it('another range unit is ignored (200), even where bytes would be a 416; the unit ignores case', async () => {
    const file = bytes.get('/small.txt')!;
    const other = await rawRequest(t.url, '/small.txt', { headers: { Range: 'items=5000-6000' } });
    expect(other.status).toBe(200);
    expect(other.body.equals(file)).toBe(true);
    // The neighbour: the same numbers in bytes are unsatisfiable.
    expect((await rawRequest(t.url, '/small.txt', { headers: { Range: 'bytes=5000-6000' } })).status).toBe(416);
    const upper = await rawRequest(t.url, '/small.txt', { headers: { Range: 'BYTES=10-19' } });
    expect(upper.status).toBe(206);
    expect(upper.body.equals(file.subarray(10, 20))).toBe(true);
  });
});
