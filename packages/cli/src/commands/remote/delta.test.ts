import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { groupDeletions, groupForBatches } from './batch-push.js';
import { planDelta, type LocalFile } from './delta-plan.js';
import { listingOf, parseListing, readListing } from './listing-client.js';

// The listing reader takes a host's answer (outside input): property-based, plus the plan and the
// batch split it drives (docs/sync.md "The delta").

const SHA = 'a'.repeat(64);
const entry = (p: string, size = 1, sha256 = SHA) => JSON.stringify({ path: p, size, sha256 });
const DONE = JSON.stringify({ done: true, files: 0, bytes: 0 });

describe('parseListing', () => {
  it('reads entries and the batch offer; refuses a cut-off listing, a bad line or lines after the end', () => {
    const offer = { path: '/wwwroot/api/sync/batch', maxFiles: 10, maxFileBytes: 5, maxBodyBytes: null };
    expect(parseListing(`${entry('a')}\n${JSON.stringify({ done: true, batch: offer })}\n`)).toEqual({
      entries: new Map([['a', { path: 'a', size: 1, sha256: SHA }]]),
      batch: offer,
    });
    expect(parseListing(`${DONE}\n`)).toEqual({ entries: new Map(), batch: undefined });
    expect(() => parseListing(`${entry('a')}\n`)).toThrow(/cut off/);
    expect(() => parseListing(`${entry('a', -1)}\n${DONE}\n`)).toThrow(/not a file entry/);
    expect(() => parseListing(`${entry('a', 1, 'x')}\n${DONE}\n`)).toThrow(/not a file entry/);
    expect(() => parseListing(`${DONE}\n${entry('a')}\n`)).toThrow(/after its closing line/);
    expect(() => parseListing(`{oops\n${DONE}\n`)).toThrow(/not JSON/);
    // Lines as the host writes them are read without JSON.parse; their neighbours still through it.
    expect([...parseListing(`${entry('q"b\\s ü\u0001')}\n${DONE}\n`).entries.keys()]).toEqual(['q"b\\s ü\u0001']);
    expect(() => parseListing(`{"path":"a","size":01,"sha256":"${SHA}"}\n${DONE}\n`)).toThrow(/not JSON/);
    expect(() => parseListing(`{"path":"a\tb","size":1,"sha256":"${SHA}"}\n${DONE}\n`)).toThrow(/not JSON/);
    expect(() => parseListing(`{"path":"a","size":1e400,"sha256":"${SHA}"}\n${DONE}\n`)).toThrow(/not a file entry/);
    expect(() => parseListing(`{"path":"a","size":9007199254740992,"sha256":"${SHA}"}\n${DONE}\n`)).toThrow(
      /not a file entry/,
    );
    expect(parseListing(`{"path":"a","size":9007199254740991,"sha256":"${SHA}"}\n${DONE}\n`).entries.get('a')).toEqual({
      path: 'a',
      size: 9007199254740991,
      sha256: SHA,
    });
  });

  it('tells a listing that is exactly the local files from one line at a time, and reads any other as parseListing does', () => {
    const files = [
      { remotePath: 'HDS/a', size: 1, sha256: SHA },
      { remotePath: 'HDS/b "q"', size: 2, sha256: SHA },
    ];
    const expected = listingOf(files)!;
    expect(expected).toBe(`${entry('HDS/a', 1)}\n${entry('HDS/b "q"', 2)}\n`);
    expect(listingOf([...files, { remotePath: 'c', size: 1 }])).toBeUndefined(); // a digest not known
    const offer = { path: '/b', maxFiles: 1, maxFileBytes: 1, maxBodyBytes: null };
    const closing = `${JSON.stringify({ done: true, files: 2, batch: offer })}\n`;
    expect(readListing(`${expected}${closing}`, expected)).toEqual({ same: true, batch: offer });
    // The neighbours: another file there, a closing line that is not one, more after it, no local listing.
    const more = `${expected}${entry('HDS/c')}\n${closing}`;
    expect(readListing(more, expected)).toMatchObject({ same: false, entries: new Map(parseListing(more).entries) });
    expect(() => readListing(`${expected}{"done":false}\n`, expected)).toThrow(/not a file entry/);
    expect(() => readListing(`${expected}${closing}${closing}`, expected)).toThrow(/after its closing line/);
    expect(() => readListing(`${expected}${closing}x`, expected)).toThrow(/after its closing line/);
    expect(readListing(`${expected}${closing}`, undefined)).toMatchObject({ same: false });

    // The same as bytes (the host's answer and the cache file's listing are compared undecoded),
    // a path beyond ASCII included.
    const wide = listingOf([...files, { remotePath: 'HDS/é 文 😀', size: 3, sha256: SHA }])!;
    const bytes = (text: string) => Buffer.from(text, 'utf8');
    expect(readListing(bytes(`${wide}${closing}`), bytes(wide))).toEqual({ same: true, batch: offer });
    expect(readListing(bytes(`${wide}${closing}`), wide)).toEqual({ same: true, batch: offer });
    const other = wide.replace('😀', '😁');
    expect(readListing(bytes(`${other}${closing}`), bytes(wide))).toEqual({
      same: false,
      ...parseListing(`${other}${closing}`),
    });
    expect(readListing(bytes(closing), bytes(wide))).toMatchObject({ same: false, entries: new Map() });
    expect(() => readListing(bytes(`${wide}${closing}x`), bytes(wide))).toThrow(/after its closing line/);
  });

  /** The reader as it was before it read the host's own lines without JSON.parse: one JSON.parse a line. */
  function referenceParse(text: string) {
    const entries = new Map<string, { path: string; size: number; sha256: string }>();
    let done: Record<string, unknown> | undefined;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      if (done) throw new Error('after its closing line');
      const value = JSON.parse(line) as Record<string, unknown> | null;
      if (typeof value === 'object' && value !== null && value.done === true) done = value;
      else if (
        typeof value === 'object' &&
        value !== null &&
        typeof value.path === 'string' &&
        value.path !== '' &&
        Number.isSafeInteger(value.size) &&
        (value.size as number) >= 0 &&
        typeof value.sha256 === 'string' &&
        /^[0-9a-f]{64}$/.test(value.sha256)
      )
        entries.set(value.path, { path: value.path, size: value.size as number, sha256: value.sha256 });
      else throw new Error('not a file entry');
    }
    if (!done) throw new Error('cut off');
    return entries;
  }

  it('reads every listing exactly as one JSON.parse a line would, or refuses it as that would (fuzz)', () => {
    const path = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.constantFrom('a', 'B/d0/f1.html', 'a"b', 'a\\b', 'a\nb', '\u0000', '\u007f', '\ud800', 'ü/€'),
    );
    const size = fc.oneof(
      fc.nat(),
      fc.constantFrom(-1, 0, 1.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 1e21),
    );
    const sha = fc.oneof(fc.constantFrom(SHA, 'x', 'A'.repeat(64), `${SHA}0`), fc.stringMatching(/^[0-9a-f]{64}$/));
    const hostLine = fc.record({ path, size, sha256: sha }).map((o) => JSON.stringify(o));
    // The host's line with one thing changed: a space, a key order, a digit form, an escape, a cut.
    const nearLine = fc
      .tuple(
        hostLine,
        fc.nat(),
        fc.constantFrom(' ', '0', '"', '\\', '\r', '\t', '\u0001', '\u2028', '}', ',', 'e1', '-', ''),
      )
      .map(([l, at, s]) => l.slice(0, at % (l.length + 1)) + s + l.slice(at % (l.length + 1)));
    const line = fc.oneof(
      hostLine,
      hostLine,
      nearLine,
      fc.string({ maxLength: 40 }),
      fc.json({ maxDepth: 2 }),
      fc.constant(DONE),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.boolean(), (lines, close) => {
        const text = `${lines.join('\n')}${close ? `\n${DONE}\n` : ''}`;
        let expected: Map<string, unknown> | Error;
        try {
          expected = referenceParse(text);
        } catch (err) {
          expected = err as Error;
        }
        if (expected instanceof Error) expect(() => parseListing(text)).toThrow(Error);
        else expect(parseListing(text).entries).toEqual(expected);
      }),
      fuzzOptions(1000),
    );
  });
});

describe('readListing', () => {
  it('reads a listing given as bytes as it reads its text, and never takes bytes that differ for the same (fuzz)', () => {
    const name = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('a', 'ü/€', '\ufffd', 'd0/f1.html'));
    const lines = fc.array(
      fc.record({ path: name, size: fc.nat(9) }).map(({ path, size }) => `${entry(path, size)}\n`),
      { maxLength: 5 },
    );
    const closing = fc.constantFrom(`${DONE}\n`, '{"done":false}\n', `${DONE}\n${DONE}\n`, `${DONE}`, '');
    // Bytes a host could send that are not UTF-8, or that decode to U+FFFD as a kept text may hold.
    const noise = fc.oneof(
      fc.constant(Buffer.alloc(0)),
      fc.uint8Array({ maxLength: 4 }).map((b) => Buffer.from(b)),
    );
    fc.assert(
      fc.property(lines, lines, closing, noise, fc.boolean(), (host, kept, close, junk, sameLines) => {
        const mine = (sameLines ? host : kept).join('');
        const bytes = Buffer.concat([Buffer.from(host.join('')), junk, Buffer.from(close)]);
        const text = bytes.toString('utf8');
        const read = (f: () => unknown) => {
          try {
            return f();
          } catch (err) {
            return `throws ${(err as Error).message}`;
          }
        };
        const asBytes = read(() => readListing(bytes, Buffer.from(mine)));
        const asText = read(() => readListing(text, mine));
        // Bytes that are their text's own encoding read the same either way.
        if (Buffer.from(text).equals(bytes)) expect(asBytes).toEqual(asText);
        // A listing taken as the kept one is, byte for byte, the kept one and a closing line.
        if ((asBytes as { same?: boolean }).same === true)
          expect(bytes.subarray(0, Buffer.byteLength(mine)).equals(Buffer.from(mine))).toBe(true);
      }),
      fuzzOptions(1000),
    );
  });
});

const local = (remotePath: string, sha256 = SHA, size = 1): LocalFile => ({
  file: `/x/${remotePath}`,
  remotePath,
  size,
  sha256,
  scanned: { rel: remotePath, abs: `/x/${remotePath}`, size, mtimeMs: 0, ctimeMs: 0, ino: 0 },
});

describe('planDelta', () => {
  it('sorts files into created, changed and unchanged; deletes only with the flag, under the prefix, never ignored names', () => {
    const remote = new Map(
      [
        ['HDS/same', SHA],
        ['HDS/diff', 'b'.repeat(64)],
        ['HDS/gone', SHA],
        ['HDS/.hidden', SHA],
        ['HDS/x.swp', SHA],
        ['HDSX/other', SHA],
      ].map(([p, s]) => [p!, { path: p!, size: 1, sha256: s! }]),
    );
    const files = [local('HDS/same'), local('HDS/diff'), local('HDS/new')];
    const plan = planDelta(files, remote, { delete: true, prefix: 'HDS' });
    expect(plan.created.map((f) => f.remotePath)).toEqual(['HDS/new']);
    expect(plan.changed.map((f) => f.remotePath)).toEqual(['HDS/diff']);
    expect(plan.unchanged).toBe(1);
    expect(plan.deleted).toEqual(['HDS/gone']);
    expect(planDelta(files, remote, { delete: false, prefix: 'HDS' }).deleted).toEqual([]);
    expect(planDelta(files, undefined, { delete: true }).changed).toHaveLength(3);
  });
});

describe('groupForBatches', () => {
  it('keeps each batch inside the host limits and sends big files alone', () => {
    const offer = { path: '/b', maxFiles: 3, maxFileBytes: 1e9, maxBodyBytes: 100_000 };
    const files = [...Array.from({ length: 7 }, (_, i) => local(`f${i}`, SHA, 10)), local('big', SHA, 2 * 1024 * 1024)];
    const { batches, alone } = groupForBatches(files, offer);
    expect(alone.map((f) => f.remotePath)).toEqual(['big']);
    expect(batches.map((b) => b.length)).toEqual([3, 3, 1]);
  });
});

describe("batches within the host's field bytes (names and values, 1 MiB unless the offer says)", () => {
  // `filePath` (8 bytes) + a path: the batch's room is the offer's bound less 1,024 bytes.
  const offer = { path: '/b', maxFiles: 500, maxFileBytes: 1e9, maxBodyBytes: null, maxFieldsBytes: 1024 + 3 * 100 };
  const named = (n: number, length: number) => `HDS/${String(n).padStart(3, '0')}${'p'.repeat(length - 7)}`;

  it('fills a batch up to the room exactly, and starts another one byte past it', () => {
    const exactly = [named(1, 92), named(2, 92), named(3, 92)].map((p) => local(p, SHA, 1));
    expect(groupForBatches(exactly, offer).batches.map((b) => b.length)).toEqual([3]);
    const over = [named(1, 92), named(2, 92), named(3, 93)].map((p) => local(p, SHA, 1));
    expect(groupForBatches(over, offer).batches.map((b) => b.length)).toEqual([2, 1]);
  });

  it('splits deletions the same way (`deletePath`, 10 bytes, a name)', () => {
    const paths = [named(1, 90), named(2, 90), named(3, 90)];
    expect(groupDeletions(paths, offer).map((b) => b.length)).toEqual([3]);
    expect(groupDeletions([...paths.slice(0, 2), named(3, 91)], offer).map((b) => b.length)).toEqual([2, 1]);
  });

  it('takes 1 MiB when the host does not say, and still the file count', () => {
    const long = Array.from({ length: 400 }, (_, i) => local(named(i, 3000), SHA, 1));
    const { batches } = groupForBatches(long, { path: '/b', maxFiles: 500, maxFileBytes: 1e9, maxBodyBytes: null });
    expect(batches.map((b) => b.length)).toEqual([348, 52]);
    const many = Array.from({ length: 7 }, (_, i) => `HDS/${i}`);
    expect(groupDeletions(many, { ...offer, maxFiles: 3 }).map((b) => b.length)).toEqual([3, 3, 1]);
  });
});
