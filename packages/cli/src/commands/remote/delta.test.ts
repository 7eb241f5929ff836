import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { groupForBatches } from './batch-push.js';
import { planDelta, type LocalFile } from './delta-plan.js';
import { parseListing } from './listing-client.js';

// The listing reader takes a host's answer (outside input): property-based, plus the plan and the
// batch split it drives (docs/sync.md "The delta").

const SHA = 'a'.repeat(64);
const entry = (p: string, size = 1, sha256 = SHA) => JSON.stringify({ path: p, size, sha256 });
const DONE = JSON.stringify({ done: true, files: 0, bytes: 0 });

describe('parseListing', () => {
  it('reads entries and the batch offer; refuses a cut-off listing, a bad line or lines after the end', () => {
    const offer = { path: '/wwwroot/api/sync/batch', maxFiles: 10, maxFileBytes: 5, maxBodyBytes: null };
    expect(parseListing(`${entry('a')}\n${JSON.stringify({ done: true, batch: offer })}\n`)).toEqual({
      entries: [{ path: 'a', size: 1, sha256: SHA }],
      batch: offer,
    });
    expect(parseListing(`${DONE}\n`)).toEqual({ entries: [], batch: undefined });
    expect(() => parseListing(`${entry('a')}\n`)).toThrow(/cut off/);
    expect(() => parseListing(`${entry('a', -1)}\n${DONE}\n`)).toThrow(/not a file entry/);
    expect(() => parseListing(`${entry('a', 1, 'x')}\n${DONE}\n`)).toThrow(/not a file entry/);
    expect(() => parseListing(`${DONE}\n${entry('a')}\n`)).toThrow(/after its closing line/);
    expect(() => parseListing(`{oops\n${DONE}\n`)).toThrow(/not JSON/);
  });

  it('never throws anything but a plain Error, and what it returns is well-formed (fuzz)', () => {
    const line = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.json({ maxDepth: 2 }),
      fc
        .record({ path: fc.string(), size: fc.integer(), sha256: fc.constantFrom(SHA, 'x') })
        .map((o) => JSON.stringify(o)),
      fc.constant(DONE),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), (lines) => {
        try {
          const parsed = parseListing(lines.join('\n'));
          for (const e of parsed.entries) {
            expect(e.path).not.toBe('');
            expect(e.size).toBeGreaterThanOrEqual(0);
            expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);
          }
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
        }
      }),
      fuzzOptions(300),
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
