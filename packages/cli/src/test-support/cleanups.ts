import { afterEach } from 'vitest';

/** What a test must undo (hosts, relays, folders), undone after each test, the newest first. */
export type Cleanups = Array<() => Promise<void> | void>;

/** Registers the undoing after each test of the file and returns the list a test pushes to. */
export function useCleanups(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  return cleanups;
}
