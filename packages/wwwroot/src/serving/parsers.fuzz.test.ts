import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { notModified, preconditionFailed } from './conditional.js';
import { etagFor } from './representation.js';
import { ifRangeHolds, rangeAnswer } from './ranges.js';

// Property-based tests of the pure request-header rules of file serving (docs/static-files.md
// "Responses"): the `Range` answer, conditional GET and `If-Range`. Seeded and replayable
// (ACK_FUZZ_SEED, ACK_FUZZ_RUNS; a failure prints its seed).

const size = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300_000 }), fc.nat({ max: 2 ** 40 }));
const offset = fc.oneof(fc.nat({ max: 400_000 }), fc.nat({ max: Number.MAX_SAFE_INTEGER }));
/** Any header text: printable, or anything at all (a header can carry odd bytes). */
const anyText = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^[ -~]*$/));

describe('rangeAnswer', () => {
  it('never throws, and a 206 is always a slice inside the representation', () => {
    const header = fc.oneof(
      anyText,
      anyText.map((t) => `bytes=${t}`),
      fc
        .array(fc.tuple(fc.option(offset), fc.option(offset)), { minLength: 1, maxLength: 4 })
        .map((parts) => `bytes=${parts.map(([a, b]) => `${a ?? ''}-${b ?? ''}`).join(',')}`),
    );
    fc.assert(
      fc.property(size, header, (n, h) => {
        const answer = rangeAnswer(n, h);
        if (answer.status === 206) {
          expect(Number.isSafeInteger(answer.start) && Number.isSafeInteger(answer.end)).toBe(true);
          expect(answer.start).toBeGreaterThanOrEqual(0);
          expect(answer.start).toBeLessThanOrEqual(answer.end);
          expect(answer.end).toBeLessThan(n);
        }
      }),
      fuzzOptions(),
    );
  });

  it('answers one first-last range with its slice, clipped to the end, else 416', () => {
    fc.assert(
      fc.property(size, offset, offset, (n, a, b) => {
        const [first, last] = a <= b ? [a, b] : [b, a];
        const answer = rangeAnswer(n, `bytes=${first}-${last}`);
        if (first < n) expect(answer).toEqual({ status: 206, start: first, end: Math.min(last, n - 1) });
        else expect(answer).toEqual({ status: 416 });
      }),
      fuzzOptions(),
    );
  });

  it('answers an open range and a suffix range, else 416', () => {
    fc.assert(
      fc.property(size, offset, (n, k) => {
        const open = rangeAnswer(n, `bytes=${k}-`);
        if (k < n) expect(open).toEqual({ status: 206, start: k, end: n - 1 });
        else expect(open).toEqual({ status: 416 });
        // A suffix longer than the representation is all of it.
        const suffix = rangeAnswer(n, `bytes=-${k}`);
        if (k > 0 && n > 0) expect(suffix).toEqual({ status: 206, start: Math.max(0, n - k), end: n - 1 });
        else expect(suffix).toEqual({ status: 416 });
        // The unit is compared ignoring case.
        expect(rangeAnswer(n, `BYTES=${k}-`)).toEqual(open);
        expect(rangeAnswer(n, `Bytes=-${k}`)).toEqual(suffix);
      }),
      fuzzOptions(),
    );
  });

  it('answers several separate ranges with the whole, and merges touching ones', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 1_000_000 }), fc.nat(), fc.nat(), fc.nat(), (n, x, y, z) => {
        // 0 <= a <= b, b + 2 <= c < n: two satisfiable ranges with a gap.
        const a = x % (n - 3);
        const b = a + (y % (n - 3 - a));
        const c = b + 2 + (z % (n - b - 2));
        expect(rangeAnswer(n, `bytes=${a}-${b},${c}-`)).toEqual({ status: 200 });
        // Adjacent ranges are one range.
        expect(rangeAnswer(n, `bytes=${a}-${b},${b + 1}-`)).toEqual({ status: 206, start: a, end: n - 1 });
      }),
      fuzzOptions(),
    );
  });

  it('answers another unit or a header without `=` with the whole, even where bytes would be a 416', () => {
    const unit = fc.stringMatching(/^[a-z]{1,8}$/).filter((u) => u !== 'bytes');
    fc.assert(
      fc.property(size, unit, offset, (n, u, k) => {
        expect(rangeAnswer(n, `${u}=0-${k}`)).toEqual({ status: 200 });
        expect(rangeAnswer(n, `${u}=${n + k}-`)).toEqual({ status: 200 });
        expect(rangeAnswer(n, `bytes ${k}`)).toEqual({ status: 200 });
      }),
      fuzzOptions(),
    );
  });
});

/** A file's validators as the store makes them. */
const version = fc
  .record({ size: fc.nat({ max: 2 ** 32 }), mtimeMs: fc.integer({ min: 0, max: 4_102_444_800_000 }) })
  .map(({ size: n, mtimeMs }) => ({
    mtimeMs,
    etag: etagFor(n, mtimeMs),
    lastModified: new Date(Math.floor(mtimeMs / 1000) * 1000).toUTCString(),
  }));
const otherTag = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{1,12}-[0-9a-f]{1,12}$/).map((t) => `"${t}"`),
  fc.stringMatching(/^[ -!#-+\--~]{0,12}$/).map((t) => `"${t}"`),
);
const date = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms));

describe('notModified', () => {
  it('never throws, whatever the headers say', () => {
    fc.assert(
      fc.property(fc.option(anyText), fc.option(anyText), version, (inm, ims, v) => {
        expect(typeof notModified(inm ?? undefined, ims ?? undefined, v.etag, v.lastModified)).toBe('boolean');
      }),
      fuzzOptions(),
    );
  });

  it('is true when If-None-Match lists the ETag (weak comparison) or is *, whatever If-Modified-Since says', () => {
    fc.assert(
      fc.property(
        version,
        fc.array(otherTag, { maxLength: 4 }),
        fc.nat(),
        fc.boolean(),
        fc.option(anyText),
        (v, others, at, weak, ims) => {
          const list = [...others];
          list.splice(at % (list.length + 1), 0, weak ? `W/${v.etag}` : v.etag);
          expect(notModified(list.join(', '), ims ?? undefined, v.etag, v.lastModified)).toBe(true);
          expect(notModified(' * ', ims ?? undefined, v.etag, v.lastModified)).toBe(true);
        },
      ),
      fuzzOptions(),
    );
  });

  it('is false when If-None-Match does not list the ETag, even with a later If-Modified-Since', () => {
    fc.assert(
      fc.property(version, fc.array(otherTag, { minLength: 1, maxLength: 4 }), (v, others) => {
        const tags = others.filter((t) => t !== v.etag);
        fc.pre(tags.length > 0);
        const header = tags.map((t, i) => (i % 2 ? `W/${t}` : t)).join(',');
        expect(notModified(header, new Date(8.64e15).toUTCString(), v.etag, v.lastModified)).toBe(false);
      }),
      fuzzOptions(),
    );
  });

  it('without If-None-Match, follows If-Modified-Since to the second', () => {
    fc.assert(
      fc.property(version, date, (v, since) => {
        const expected = Math.floor(v.mtimeMs / 1000) * 1000 <= Math.floor(since.getTime() / 1000) * 1000;
        expect(notModified(undefined, since.toUTCString(), v.etag, v.lastModified)).toBe(expected);
        expect(notModified(undefined, undefined, v.etag, v.lastModified)).toBe(false);
      }),
      fuzzOptions(),
    );
  });
});

describe('ifRangeHolds', () => {
  it('holds for the ETag itself and the Last-Modified date, never for a weak or other tag', () => {
    fc.assert(
      fc.property(version, otherTag, (v, other) => {
        expect(ifRangeHolds(v.etag, v.etag, v.mtimeMs)).toBe(true);
        expect(ifRangeHolds(v.lastModified, v.etag, v.mtimeMs)).toBe(true);
        expect(ifRangeHolds(`W/${v.etag}`, v.etag, v.mtimeMs)).toBe(false);
        if (other !== v.etag) expect(ifRangeHolds(other, v.etag, v.mtimeMs)).toBe(false);
      }),
      fuzzOptions(),
    );
  });

  it('fails for a date older than the file, and for text that is no date', () => {
    fc.assert(
      fc.property(version, date, anyText, (v, d, text) => {
        const older = Math.floor(d.getTime() / 1000) * 1000 < Math.floor(v.mtimeMs / 1000) * 1000;
        if (older) expect(ifRangeHolds(d.toUTCString(), v.etag, v.mtimeMs)).toBe(false);
        if (Number.isNaN(Date.parse(text)) && !text.startsWith('"') && !text.startsWith('W/')) {
          expect(ifRangeHolds(text, v.etag, v.mtimeMs)).toBe(false);
        }
      }),
      fuzzOptions(),
    );
  });
});

describe('preconditionFailed', () => {
  const etag = fc.stringMatching(/^"[0-9a-f]{1,12}-[0-9a-f]{1,12}"$/);
  const date = fc
    .date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true })
    .map((d) => d.toUTCString());
  it('never throws; If-Match holds exactly when one listed tag is the strong tag itself, or *', () => {
    fc.assert(
      fc.property(
        etag,
        fc.array(fc.oneof(etag, anyText), { maxLength: 4 }),
        fc.boolean(),
        date,
        (tag, others, listIt, modified) => {
          const listed = listIt ? [...others, tag] : others;
          const header = listed.join(', ');
          const matches = header.trim() === '*' || header.split(',').some((c) => c.trim() === tag);
          expect(preconditionFailed(header, undefined, tag, modified)).toBe(!matches);
          // a weak tag never matches If-Match, whatever is listed (strong comparison), except *
          if (header.trim() !== '*') expect(preconditionFailed(header, undefined, `W/${tag}`, modified)).toBe(true);
        },
      ),
      fuzzOptions(),
    );
  });

  it('never throws; If-Unmodified-Since fails only for a file modified after a date that parses', () => {
    fc.assert(
      fc.property(fc.oneof(date, anyText), date, etag, (since, modified, tag) => {
        const failed = preconditionFailed(undefined, since, tag, modified);
        const s = Date.parse(since);
        expect(failed).toBe(!Number.isNaN(s) && Date.parse(modified) > s);
      }),
      fuzzOptions(),
    );
  });
});
