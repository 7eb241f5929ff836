import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHash } from 'node:crypto';
import { basicAuthorization, hostAccessHeader } from './credentials.js';
import { DEFAULT_RETRY, isRetryable, retryDelayMs } from './retry.js';
import { isIgnoredPath, joinRemote, remotePathFor } from './path-mapping.js';
import { createKeyedQueue } from './keyed-queue.js';
import { exitCodeFor, exitForStatus } from './outcome.js';

describe('credentials', () => {
  it('sends base64("<token>:") and the SHA-256 hex of the host access ID', () => {
    expect(basicAuthorization('abc')).toBe(`Basic ${Buffer.from('abc:').toString('base64')}`);
    const hash = createHash('sha256').update('key').digest('hex');
    expect(hostAccessHeader('key')).toBe(hash);
    expect(hostAccessHeader(hash)).toBe(hash);
  });
});

describe('retry policy', () => {
  it('retries network errors, 429 and 5xx only', () => {
    expect([isRetryable({ networkError: true }), isRetryable({ status: 429 }), isRetryable({ status: 502 })]).toEqual([
      true,
      true,
      true,
    ]);
    expect([isRetryable({ status: 400 }), isRetryable({ status: 401 }), isRetryable({ status: 413 })]).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('backs off exponentially with jitter, honours Retry-After, and never waits over maxMs', () => {
    const policy = { ...DEFAULT_RETRY, baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, policy, null, 0, () => 1))).toEqual([100, 200, 400, 800, 1000]);
    expect(retryDelayMs(1, policy, null, 0, () => 0)).toBe(50);
    expect(retryDelayMs(1, policy, '0.5')).toBe(500);
    expect(retryDelayMs(1, policy, '120')).toBe(1000);
    expect(retryDelayMs(1, { ...policy, maxMs: 10_000 }, new Date(13_000).toUTCString(), 10_000)).toBe(3000);
  });
});

describe('path mapping', () => {
  it('maps local files to remote paths with / under a prefix', () => {
    expect(joinRemote('/HDS/', 'a\\b.html')).toBe('HDS/a/b.html');
    expect(joinRemote(undefined, '/x.html')).toBe('x.html');
    expect(remotePathFor('/w/root', '/w/root/js/app.js', 'HDS')).toBe('HDS/js/app.js');
    expect(remotePathFor('/w/root', '/w/other/app.js')).toBeUndefined();
    expect([
      isIgnoredPath('.git/config'),
      isIgnoredPath('a/.DS_Store'),
      isIgnoredPath('a.html~'),
      isIgnoredPath('js/app.js'),
    ]).toEqual([true, true, true, false]);
  });
});

describe('exit codes', () => {
  it('maps answers to 3 refused, 2 bad input, 1 failed, refused first', () => {
    expect([401, 403, 400, 413, 404, 502].map(exitForStatus)).toEqual([3, 3, 2, 2, 1, 1]);
    const o = (exit: number) => ({ url: 'u', ok: false, exit });
    expect(exitCodeFor([o(1), o(3), o(2)])).toBe(3);
    expect(exitCodeFor([o(1), o(2)])).toBe(2);
    expect(exitCodeFor([{ url: 'u', ok: true, exit: 0 }])).toBe(0);
  });
});

describe('keyed queue', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('debounces a burst into one run, and runs a key touched while running once more afterwards, never twice at once', async () => {
    vi.useFakeTimers();
    const runs: string[] = [];
    let running = 0;
    let maxRunning = 0;
    let release: () => void = () => undefined;
    const queue = createKeyedQueue({
      debounceMs: 10,
      concurrency: 4,
      async run(key) {
        running++;
        maxRunning = Math.max(maxRunning, running);
        runs.push(key);
        if (runs.length === 1) await new Promise<void>((r) => (release = r));
        running--;
      },
    });
    for (let i = 0; i < 5; i++) queue.touch('a');
    // The debounce is a timer: the test moves the clock rather than sleeping.
    await vi.advanceTimersByTimeAsync(10);
    expect(runs).toEqual(['a']);
    queue.touch('a');
    queue.touch('a');
    await vi.advanceTimersByTimeAsync(10); // debounce over while the first run is still going
    expect(runs).toEqual(['a']);
    release();
    await queue.idle();
    expect(runs).toEqual(['a', 'a']);
    expect(maxRunning).toBe(1);
  });

  it('retries a failed key after the delay it is given, then gives up', async () => {
    const attempts: number[] = [];
    const queue = createKeyedQueue({
      debounceMs: 1,
      concurrency: 1,
      async run() {
        throw new Error('down');
      },
      retryDelay(_key, _err, attempt) {
        attempts.push(attempt);
        return attempt < 3 ? 1 : undefined;
      },
    });
    queue.touch('f');
    await queue.idle(); // a key waiting for its retry is not idle
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('runs different keys side by side up to the concurrency', async () => {
    let running = 0;
    let maxRunning = 0;
    const queue = createKeyedQueue({
      debounceMs: 1,
      concurrency: 2,
      async run() {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
      },
    });
    for (const k of ['a', 'b', 'c', 'd']) queue.touch(k);
    await queue.idle();
    expect(maxRunning).toBe(2);
  });
});
