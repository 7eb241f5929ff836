/**
 * Signed-out token ids and their expiries (docs/dev-sign-in.md "Sign-out holds"), kept so that a
 * million of them cost the garbage collector nothing: the ids ack mints (32 hex digits, 128 bits)
 * live as four 32-bit words in one open-addressing table of typed arrays, not as a million strings
 * in a `Map`. A `Map` of that size made every young-generation collection copy the surviving
 * strings (50 ms pauses while the file was read at start) and its rehash one blocking step.
 * Any other id (an older host's, a hand-written record) goes to a small `Map` beside it.
 * Lookups, inserts and deletes are O(1), with no object allocated per id kept.
 */
export class TokenIdTable {
  /**
   * 256 tables chosen by the id's hash, each growing on its own: a growth copies one table of a
   * few thousand ids, never all of them (a fresh 48 MiB table for a million ids was 170 ms of page
   * faults in one turn of the event loop).
   */
  private readonly shards = Array.from({ length: SHARDS }, () => new Shard());
  private readonly others = new Map<string, number>();
  private live = 0;

  get size(): number {
    return this.live + this.others.size;
  }

  get(id: string): number | undefined {
    const key = keyOf(id);
    if (!key) return this.others.get(id);
    const hash = hashOf(key);
    return this.shards[hash >>> SHARD_SHIFT]!.get(key, hash);
  }

  set(id: string, expiresAtMs: number): void {
    if (!(expiresAtMs > 0)) throw new RangeError('an expiry is a time after the epoch');
    const key = keyOf(id);
    if (!key) return void this.others.set(id, expiresAtMs);
    const hash = hashOf(key);
    if (this.shards[hash >>> SHARD_SHIFT]!.set(key, hash, expiresAtMs)) this.live++;
  }

  delete(id: string): boolean {
    const key = keyOf(id);
    if (!key) return this.others.delete(id);
    const hash = hashOf(key);
    if (!this.shards[hash >>> SHARD_SHIFT]!.delete(key, hash)) return false;
    this.live--;
    return true;
  }

  /** Every id kept and its expiry, in no particular order (a compaction writes them out). */
  *entries(): Generator<[string, number]> {
    yield* this.others;
    for (const shard of this.shards) yield* shard.entries();
  }

  /**
   * Removes the ids expired at `now`, about `step` slots at a time, calling `pause` between two
   * steps (a turn of the event loop) so that a sweep of a million never holds the loop long.
   */
  async sweep(now: number, step: number, pause: () => Promise<unknown>): Promise<void> {
    for (const [id, exp] of this.others) if (exp <= now) this.others.delete(id);
    let since = 0;
    for (const shard of this.shards) {
      this.live -= shard.sweep(now);
      since += shard.capacity;
      if (since >= step) {
        since = 0;
        await pause();
      }
    }
  }
}

const SHARDS = 256;
const SHARD_SHIFT = 24;

/** One open-addressing table (linear probing) of ids as four words each. */
class Shard {
  capacity = 16;
  private words = new Uint32Array(4 * 16);
  /** The expiry of each slot in ms since the epoch; 0: never used; -1: deleted. */
  private expiries = new Float64Array(16);
  /** Slots not free: live and deleted. */
  private used = 0;
  private live = 0;

  get(key: Uint32Array, hash: number): number | undefined {
    const slot = this.find(key, hash);
    return slot < 0 ? undefined : this.expiries[slot];
  }

  /** True when the id is new here. */
  set(key: Uint32Array, hash: number, expiresAtMs: number): boolean {
    const found = this.find(key, hash);
    if (found >= 0) {
      this.expiries[found] = expiresAtMs;
      return false;
    }
    if (2 * (this.used + 1) > this.capacity) this.grow();
    const slot = this.freeSlot(hash);
    if (this.expiries[slot] === 0) this.used++;
    this.words.set(key, 4 * slot);
    this.expiries[slot] = expiresAtMs;
    this.live++;
    return true;
  }

  delete(key: Uint32Array, hash: number): boolean {
    const slot = this.find(key, hash);
    if (slot < 0) return false;
    this.expiries[slot] = -1;
    this.live--;
    return true;
  }

  *entries(): Generator<[string, number]> {
    for (let slot = 0; slot < this.capacity; slot++) {
      const exp = this.expiries[slot]!;
      if (exp <= 0) continue;
      let id = '';
      for (let i = 4 * slot; i < 4 * slot + 4; i++) id += this.words[i]!.toString(16).padStart(8, '0');
      yield [id, exp];
    }
  }

  /** Marks the ids expired at `now` deleted; gives how many. */
  sweep(now: number): number {
    let swept = 0;
    for (let slot = 0; slot < this.capacity; slot++) {
      const exp = this.expiries[slot]!;
      if (exp > 0 && exp <= now) {
        this.expiries[slot] = -1;
        swept++;
      }
    }
    this.live -= swept;
    return swept;
  }

  /** The slot holding `key`, or -1. A table is at most half full, so a probe always meets a never-used slot. */
  private find(key: Uint32Array, hash: number): number {
    const mask = this.capacity - 1;
    const w = this.words;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const exp = this.expiries[slot]!;
      if (exp === 0) return -1;
      const at = 4 * slot;
      if (exp > 0 && w[at] === key[0] && w[at + 1] === key[1] && w[at + 2] === key[2] && w[at + 3] === key[3])
        return slot;
    }
  }

  /** The first deleted or never-used slot on the probe sequence of `hash` (its id is not here). */
  private freeSlot(hash: number): number {
    const mask = this.capacity - 1;
    let slot = hash & mask;
    while (this.expiries[slot]! > 0) slot = (slot + 1) & mask;
    return slot;
  }

  /** A table with room for twice the live ids, at most half full; deleted slots are dropped. */
  private grow(): void {
    const { words, expiries, capacity: old } = this;
    this.capacity = slotsFor(2 * (this.live + 1));
    this.words = new Uint32Array(4 * this.capacity);
    this.expiries = new Float64Array(this.capacity);
    this.used = this.live;
    for (let slot = 0; slot < old; slot++) {
      const exp = expiries[slot]!;
      if (exp <= 0) continue;
      const at = 4 * slot;
      const to = this.freeSlot(hashOf(words, at));
      this.words.set(words.subarray(at, at + 4), 4 * to);
      this.expiries[to] = exp;
    }
  }
}

/** A power of two with room for `ids` at most half full. */
function slotsFor(ids: number): number {
  let slots = 16;
  while (slots < 2 * ids) slots *= 2;
  return slots;
}

const scratch = new Uint32Array(4);
const HEX_ID = /^[0-9a-f]{32}$/;

/** The id's four words (in a buffer reused by the next call), or undefined for any other id. */
function keyOf(id: string): Uint32Array | undefined {
  if (id.length !== 32 || !HEX_ID.test(id)) return undefined;
  for (let i = 0; i < 4; i++) scratch[i] = parseInt(id.slice(8 * i, 8 * i + 8), 16);
  return scratch;
}

/** Mixes the four words (ids are random, but a table must not trust that): murmur3's finaliser. */
function hashOf(key: Uint32Array, at = 0): number {
  let h =
    key[at]! ^
    Math.imul(key[at + 1]!, 0x9e3779b1) ^
    Math.imul(key[at + 2]!, 0x85ebca77) ^
    Math.imul(key[at + 3]!, 0xc2b2ae3d);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
