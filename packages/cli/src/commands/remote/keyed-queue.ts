/**
 * The queue behind `ack sync watch`: events for a key (a file) are debounced; each key's work runs
 * one at a time and in order (a key touched while its work runs is run again afterwards, once);
 * at most `concurrency` keys run at once; failed work is retried after the delay `retryDelay`
 * gives (undefined: give up until the key is touched again).
 */
export interface KeyedQueueOptions {
  debounceMs: number;
  concurrency: number;
  run(key: string): Promise<void>;
  retryDelay?(key: string, error: unknown, attempt: number): number | undefined;
}

export interface KeyedQueue {
  touch(key: string): void;
  /** Resolves once nothing is waiting, debouncing or running. */
  idle(): Promise<void>;
  /** Stops timers; work already running finishes. */
  close(): void;
}

interface KeyState {
  timer?: NodeJS.Timeout;
  running: boolean;
  again: boolean;
  attempt: number;
}

export function createKeyedQueue(options: KeyedQueueOptions): KeyedQueue {
  const keys = new Map<string, KeyState>();
  const ready: string[] = [];
  let active = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];

  const state = (key: string) => {
    let s = keys.get(key);
    if (!s) keys.set(key, (s = { running: false, again: false, attempt: 0 }));
    return s;
  };

  const isIdle = () => active === 0 && ready.length === 0 && [...keys.values()].every((s) => !s.timer && !s.running);
  const checkIdle = () => {
    if (!isIdle()) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    waiters.forEach((w) => w());
  };

  const schedule = (key: string, ms: number) => {
    const s = state(key);
    if (s.timer) clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      s.timer = undefined;
      markReady(key);
    }, ms);
  };

  const markReady = (key: string) => {
    if (closed) return checkIdle();
    const s = state(key);
    if (s.running) s.again = true;
    else if (!ready.includes(key)) ready.push(key);
    pump();
  };

  const pump = () => {
    while (!closed && active < options.concurrency && ready.length > 0) {
      const key = ready.shift()!;
      void runKey(key);
    }
    checkIdle();
  };

  const runKey = async (key: string) => {
    const s = state(key);
    s.running = true;
    active++;
    try {
      await options.run(key);
      s.attempt = 0;
    } catch (err) {
      s.attempt++;
      const delay = options.retryDelay?.(key, err, s.attempt);
      if (delay !== undefined && !s.again && !closed) schedule(key, delay);
      if (delay === undefined) s.attempt = 0;
    } finally {
      s.running = false;
      active--;
      if (s.again) {
        s.again = false;
        markReady(key);
      }
      if (!s.timer && !s.running && !ready.includes(key) && s.attempt === 0) keys.delete(key);
      pump();
    }
  };

  return {
    touch(key) {
      if (closed) return;
      const s = state(key);
      s.attempt = 0;
      schedule(key, options.debounceMs);
    },
    idle() {
      return isIdle() ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
    close() {
      closed = true;
      for (const s of keys.values()) {
        if (s.timer) clearTimeout(s.timer);
        s.timer = undefined;
      }
      ready.length = 0;
      checkIdle();
    },
  };
}
