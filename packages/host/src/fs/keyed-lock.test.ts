import { describe, expect, it } from 'vitest';
import { KeyedLock } from './keyed-lock.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedLock', () => {
  it('runs work on one key one at a time, in arrival order, and other keys alongside', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const job = (name: string, keys: string[]) =>
      lock.run(keys, async () => {
        log.push(`${name}+`);
        await tick();
        await tick();
        log.push(`${name}-`);
      });
    await Promise.all([job('a', ['x']), job('b', ['x']), job('c', ['y'])]);
    expect(log.indexOf('a-')).toBeLessThan(log.indexOf('b+'));
    expect(log.indexOf('c+')).toBeLessThan(log.indexOf('a-'));
    expect(lock.size).toBe(0);
  });

  it('never deadlocks on overlapping key sets given in opposite orders, and releases on failure', async () => {
    const lock = new KeyedLock();
    let inside = 0;
    let most = 0;
    const job = (keys: string[], fail: boolean) =>
      lock.run(keys, async () => {
        most = Math.max(most, ++inside);
        await tick();
        inside--;
        if (fail) throw new Error('boom');
      });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => job(i % 2 ? ['p', 'q'] : ['q', 'p'], i % 5 === 0)),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(4);
    expect(most).toBe(1);
    expect(lock.size).toBe(0);
  });
});
