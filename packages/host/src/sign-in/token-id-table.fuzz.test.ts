// Seeded property test of the sign-out ids' table (docs/reliability.md "Fuzzing"): whatever the
// mix of ids (ack's 32 hex digits, ids that differ in one word or share a shard, any other
// string), of sign-outs, repeats, deletions, growth and sweeps, the table answers as a `Map` does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { TokenIdTable } from './token-id-table.js';

const hexWord = fc.integer({ min: 0, max: 0xffffffff }).map((n) => n.toString(16).padStart(8, '0'));
/** Ids drawn from a few words, so that many share words, and a few other strings. */
const id = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('00000000', 'ffffffff', 'deadbeef'), hexWord, hexWord)
      .map(([a, b, c]) => `${a}${b}${a}${c}`),
  },
  { weight: 3, arbitrary: fc.array(hexWord, { minLength: 4, maxLength: 4 }).map((w) => w.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 34 }) },
  { weight: 1, arbitrary: fc.array(hexWord, { minLength: 4, maxLength: 4 }).map((w) => w.join('').toUpperCase()) },
);

type Op =
  | { kind: 'set'; id: number; exp: number }
  | { kind: 'delete'; id: number }
  | { kind: 'sweep'; now: number; step: number }
  | { kind: 'bulk'; from: number; count: number; exp: number };

const op = (ids: number): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('set' as const),
        id: fc.nat(ids - 1),
        exp: fc.integer({ min: 1, max: 100 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), id: fc.nat(ids - 1) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('sweep' as const),
        now: fc.integer({ min: 0, max: 100 }),
        step: fc.integer({ min: 1, max: 300 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('bulk' as const),
        from: fc.nat(100_000),
        count: fc.integer({ min: 1, max: 3000 }),
        exp: fc.integer({ min: 1, max: 100 }),
      }),
    },
  );

const bulkId = (n: number) => n.toString(16).padStart(32, '0');

// Thousands of ids per run, 150 runs: seconds on a loaded machine, more under mutation testing's
// coverage, whose tests fail after 5 s unless given longer (docs/reliability.md "Mutation testing").
describe('TokenIdTable (property)', { timeout: 30_000 }, () => {
  it('answers get, size, delete and its entries as a Map does, through growth and sweeps', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .uniqueArray(id, { minLength: 1, maxLength: 40 })
          .chain((ids) => fc.tuple(fc.constant(ids), fc.array(op(ids.length), { minLength: 1, maxLength: 60 }))),
        async ([ids, ops]) => {
          const table = new TokenIdTable();
          const model = new Map<string, number>();
          for (const o of ops) {
            if (o.kind === 'set') {
              table.set(ids[o.id]!, o.exp);
              model.set(ids[o.id]!, o.exp);
            } else if (o.kind === 'delete') {
              expect(table.delete(ids[o.id]!)).toBe(model.delete(ids[o.id]!));
            } else if (o.kind === 'bulk') {
              for (let n = o.from; n < o.from + o.count; n++) {
                table.set(bulkId(n), o.exp);
                model.set(bulkId(n), o.exp);
              }
            } else {
              let pauses = 0;
              await table.sweep(o.now, o.step, async () => void pauses++);
              for (const [k, exp] of model) if (exp <= o.now) model.delete(k);
              // Every shard has 16 slots or more: a step that small gives the loop a turn after each.
              if (o.step <= 16) expect(pauses).toBeGreaterThanOrEqual(255);
            }
            expect(table.size).toBe(model.size);
          }
          for (const k of ids) expect(table.get(k), k).toBe(model.get(k));
          for (const [k, exp] of model) expect(table.get(k), k).toBe(exp);
          // What a compaction writes out: every id kept, once, with its expiry, and nothing else.
          const listed = [...table.entries()];
          expect(new Map(listed)).toEqual(model);
          expect(listed).toHaveLength(model.size);
          // An id one digit away from a kept one is not kept.
          for (const k of model.keys()) {
            const near = k.slice(0, -1) + (k.endsWith('0') ? '1' : '0');
            expect(table.get(near)).toBe(model.get(near));
          }
        },
      ),
      fuzzOptions(150),
    );
  });

  it('tells apart ids that differ in one of their four words only, among thousands', () => {
    const table = new TokenIdTable();
    const word = (n: number) => n.toString(16).padStart(8, '0');
    const kept: string[] = [];
    for (let n = 0; n < 20_000; n++)
      kept.push(word(n * 7919) + word(n * 104729) + word(n * 1299709) + word(n * 15485863));
    kept.forEach((id, n) => table.set(id, n + 1));
    for (const [n, id] of kept.entries()) {
      expect(table.get(id)).toBe(n + 1);
      // Its neighbours, each with one word changed, were never signed out.
      for (let w = 0; w < 4; w++) {
        const near =
          id.slice(0, 8 * w) +
          word((parseInt(id.slice(8 * w, 8 * w + 8), 16) ^ 0x80000000) >>> 0) +
          id.slice(8 * w + 8);
        expect(table.get(near), near).toBeUndefined();
      }
    }
  });

  it('refuses an expiry that is not a time after the epoch', () => {
    const table = new TokenIdTable();
    for (const bad of [0, -1, Number.NaN])
      expect(() => table.set('a'.repeat(32), bad)).toThrow(new RangeError('an expiry is a time after the epoch'));
    table.set('a'.repeat(32), 1);
    expect(table.get('a'.repeat(32))).toBe(1);
  });
});
