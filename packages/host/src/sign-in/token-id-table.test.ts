import { describe, expect, it } from 'vitest';
import { TokenIdTable } from './token-id-table.js';

// The sign-out ids' table at the edges a property test meets only by chance (docs/dev-sign-in.md
// "Sign-out holds"): the expiry instant of a sweep, and how often a sweep gives the loop a turn.

const hexId = (n: number) => n.toString(16).padStart(32, '0');

async function sweep(table: TokenIdTable, now: number, step: number): Promise<number> {
  let pauses = 0;
  await table.sweep(now, step, async () => {
    pauses++;
  });
  return pauses;
}

describe('TokenIdTable', () => {
  it('a sweep drops an id from its expiry instant on, and keeps one a millisecond younger', async () => {
    const table = new TokenIdTable();
    table.set(hexId(1), 1_000);
    table.set(hexId(2), 1_001);
    table.set('not-a-hex-id', 1_000);
    table.set('not-a-hex-id-either', 1_001);
    await sweep(table, 1_000, 1_000_000);
    expect(table.get(hexId(1))).toBeUndefined();
    expect(table.get('not-a-hex-id')).toBeUndefined();
    expect(table.get(hexId(2))).toBe(1_001);
    expect(table.get('not-a-hex-id-either')).toBe(1_001);
    expect(table.size).toBe(2);
    // What a compaction writes out after it: the two younger ids only.
    expect(new Map(table.entries())).toEqual(
      new Map([
        ['not-a-hex-id-either', 1_001],
        [hexId(2), 1_001],
      ]),
    );
  });

  it('gives the event loop a turn after about `step` slots: every shard, every other one, or none', async () => {
    // A new table has 256 shards of 16 slots each.
    const table = new TokenIdTable();
    table.set(hexId(7), 5);
    expect(await sweep(table, 1, 16)).toBe(256);
    expect(await sweep(table, 1, 17)).toBe(128);
    expect(await sweep(table, 1, 32)).toBe(128);
    expect(await sweep(table, 1, 16 * 256)).toBe(1);
    expect(await sweep(table, 1, 16 * 256 + 1)).toBe(0);
    expect(table.get(hexId(7))).toBe(5);
  });
});
