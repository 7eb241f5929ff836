import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the delay window turns over: the liveness answer covers the last one to two windows. */
const WINDOW_MS = 1_000;
/** The tick whose lateness is measured directly, beside Node's histogram. */
const TICK_MS = 50;

export interface EventLoopMonitor {
  /** The longest the event loop was held over the last one to two seconds, in ms. */
  delayMs(): number;
  close(): void;
}

/**
 * Watches the event loop's delay (docs/operations.md "Health") two ways: Node's own histogram
 * (sampled every 20 ms), and a tick of our own whose lateness is kept, and read also as the time
 * since it last ran. The second way answers for a hold that ended just before the liveness
 * request, whichever of the two timers Node runs first after it.
 */
export function monitorEventLoop(): EventLoopMonitor {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  let previousMaxNs = 0;
  let lastTick = performance.now();
  let lateMs = 0;
  let previousLateMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    lateMs = Math.max(lateMs, now - lastTick - TICK_MS);
    lastTick = now;
  }, TICK_MS);
  tick.unref();
  const window = setInterval(() => {
    previousMaxNs = histogram.max;
    histogram.reset();
    previousLateMs = lateMs;
    lateMs = 0;
  }, WINDOW_MS);
  window.unref();
  return {
    delayMs: () =>
      Math.max(
        previousMaxNs / 1e6,
        histogram.max / 1e6,
        previousLateMs,
        lateMs,
        performance.now() - lastTick - TICK_MS,
      ),
    close() {
      clearInterval(tick);
      clearInterval(window);
      histogram.disable();
    },
  };
}
