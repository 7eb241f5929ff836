import { AssertionError } from 'node:assert';

export interface WaitForOptions {
  /** Give up after this many milliseconds (default 10 s: well inside a test's own time limit). */
  timeout?: number;
  /** Milliseconds between two checks (default 20). */
  interval?: number;
  /** What was awaited, for the failure; a function is called at the failure (e.g. to show output so far). */
  message?: string | (() => string);
}

/**
 * The one way tests wait for something another process, socket or timer brings about: checks
 * `predicate` until it returns a truthy value (which is returned), and fails as an assertion,
 * naming what was awaited, once `timeout` passes — not as the test's time-out. A predicate that
 * throws counts as not yet met (a file not written yet); the last error is shown on failure.
 * A number as second argument is the timeout.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions | number = {},
): Promise<NonNullable<T>> {
  const { timeout = 10_000, interval = 20, message } = typeof options === 'number' ? { timeout: options } : options;
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
  const what = typeof message === 'function' ? message() : (message ?? 'condition');
  const cause = lastError === undefined ? '' : ` (last check threw: ${String(lastError)})`;
  throw new AssertionError({ message: `waitFor: ${what} not met within ${timeout} ms${cause}` });
}
