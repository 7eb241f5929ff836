import path from 'node:path';

/**
 * Serialises work per key within this process: `run(keys, fn)` waits until no other `run` holds
 * any of `keys`, then runs `fn`. Keys are taken in sorted order, so two callers that need the same
 * keys never wait on each other in a circle. Used to commit (or delete) one target path at a time;
 * see docs/sync.md "One writer at a time".
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key));
      return await fn();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /**
   * Whether any `run` holds or waits for `key`. Work that checks this and then finishes without
   * yielding to the event loop (synchronous calls only) cannot meet another holder of the key.
   */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }

  /** Keys held or waited for (for tests: empty once every run has finished). */
  get size(): number {
    return this.tails.size;
  }

  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}

/** The key of a file path: resolved, and lower-cased where file names ignore case by default. */
export function pathKey(file: string): string {
  const resolved = path.resolve(file);
  return process.platform === 'win32' || process.platform === 'darwin' ? resolved.toLowerCase() : resolved;
}

/** The one lock for target files, shared by every write and delete in this process. */
export const targetLocks = new KeyedLock();
