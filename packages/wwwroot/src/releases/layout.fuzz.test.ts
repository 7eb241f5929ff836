import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { ReleaseError, checkReleaseId, parsePrefix, prefixPaths } from './layout.js';

// Property test of the two parsers of a release request's query (docs/wire-formats.md "Sync
// releases"): whatever `path` and `id` arrive, a 400 ReleaseError or a prefix whose link, releases
// folder and staging stay inside the contract folder. Replay with ACK_FUZZ_SEED / ACK_FUZZ_RUNS.

const contract = path.resolve('/srv/contracts/wwwroot');
const inside = (p: string) => p.startsWith(`${contract}${path.sep}`);
const piece = fc.oneof(fc.string(), fc.constantFrom('..', '.', '/', '\\', '%2F', '.ack-releases', 'HDS', '\0'));

describe('release prefix and id parsers', () => {
  it('accept only prefixes that stay inside the contract folder, refuse the rest with a 400', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const raw = pieces.join('');
        let segments: string[];
        try {
          segments = parsePrefix(raw);
        } catch (err) {
          expect(err).toBeInstanceOf(ReleaseError);
          expect((err as ReleaseError).status).toBe(400);
          return;
        }
        const p = prefixPaths(contract, segments);
        for (const s of segments) expect(s === '' || s.startsWith('.') || /[/\\%\0]/.test(s)).toBe(false);
        expect(inside(p.link) && inside(p.home) && inside(p.tempLink)).toBe(true);
        expect(parsePrefix(p.prefix)).toEqual(segments);
      }),
      fuzzOptions(),
    );
  });

  it('take an id as a single plain name or refuse it with a 400', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom('..', 'a/b', 'r-1', 'x.staging', '')), (id) => {
        try {
          checkReleaseId(id);
        } catch (err) {
          expect((err as ReleaseError).status).toBe(400);
          return;
        }
        expect(path.basename(id)).toBe(id);
        expect(/^[A-Za-z0-9_-]+$/.test(id)).toBe(true);
      }),
      fuzzOptions(),
    );
  });
});
