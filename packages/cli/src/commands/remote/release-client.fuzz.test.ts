import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { readLiveReleases, readRelease, readReleaseList } from './release-client.js';

// A host's answer about its releases is outside input: the reader takes exactly the documented
// shape (docs/wire-formats.md "Sync releases") and answers undefined for anything else, never throws.

const release = fc.record({
  id: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
  prefix: fc.string({ maxLength: 10 }),
  time: fc.string({ maxLength: 30 }),
  by: fc.string({ maxLength: 20 }),
  files: fc.nat(),
  bytes: fc.nat(),
  digest: fc.string({ maxLength: 80 }),
  live: fc.boolean(),
});

describe('readReleaseList', () => {
  it('takes every well-formed list as it is', () => {
    fc.assert(
      fc.property(fc.array(release, { maxLength: 5 }), (releases) => {
        expect(readReleaseList({ module: 'wwwroot', prefix: 'HDS/', releases })).toEqual(releases);
        for (const r of releases) expect(readRelease(r)).toEqual(r);
      }),
      fuzzOptions(500),
    );
  });

  it('refuses anything else without throwing: a broken field, a missing list, any JSON', () => {
    const broken = release.chain((r) =>
      fc
        .constantFrom('id', 'files', 'bytes', 'digest', 'live', 'time')
        .chain((key) =>
          fc
            .oneof(fc.constant(null), fc.constant(-1), fc.constant('../x'), fc.constant(1.5), fc.constant({}))
            .map((bad) => ({ ...r, [key]: bad })),
        ),
    );
    fc.assert(
      fc.property(fc.array(release, { maxLength: 3 }), broken, fc.nat(), (good, bad, at) => {
        const releases = [...good];
        releases.splice(at % (good.length + 1), 0, bad as never);
        const keyed = bad as unknown as Record<string, unknown>;
        // `live` may be absent, and `digest`/`time` any string: only a wrong type is refused.
        const stillGood = typeof keyed.live === 'boolean' && readRelease(bad) !== undefined;
        if (!stillGood) expect(readReleaseList({ releases })).toBeUndefined();
      }),
      fuzzOptions(500),
    );
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const list = readReleaseList(value);
        expect(list === undefined || Array.isArray(list)).toBe(true);
        expect(() => readRelease(value)).not.toThrow();
      }),
      fuzzOptions(500),
    );
  });
});

describe('readLiveReleases', () => {
  const entry = fc.record({
    prefix: fc.string({ maxLength: 12 }),
    live: fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/), { nil: null }),
  });

  it('takes every well-formed answer, prefix by prefix', () => {
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => e.prefix, maxLength: 6 }), (prefixes) => {
        const read = readLiveReleases({ module: 'wwwroot', prefixes });
        expect(read).toEqual(new Map(prefixes.map((p) => [p.prefix, p.live])));
      }),
      fuzzOptions(500),
    );
  });

  it('refuses a broken entry beside good ones, and any JSON that is not the answer, without throwing', () => {
    const broken = fc.oneof(
      entry.map((e) => ({ ...e, prefix: 7 })),
      entry.map((e) => ({ ...e, live: 1 })),
      entry.map(({ prefix }) => ({ prefix })),
      fc.constant(null),
      fc.constant('HDS/'),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 3 }), broken, fc.nat(), (good, bad, at) => {
        const prefixes: unknown[] = [...good];
        prefixes.splice(at % (good.length + 1), 0, bad);
        expect(readLiveReleases({ prefixes })).toBeUndefined();
      }),
      fuzzOptions(500),
    );
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const read = readLiveReleases(value);
        expect(read === undefined || read instanceof Map).toBe(true);
      }),
      fuzzOptions(500),
    );
  });
});
