import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the delay window turns over: the liveness answer covers the last one to two windows. */
const WINDOW_MS = 1_000;

export interface EventLoopMonitor {
  /** The longest the event loop was held over the last one to two seconds, in ms. */
  delayMs(): number;
  close(): void;
}

/**
 * Watches the event loop's delay with Node's own histogram (sampled every 20 ms): a loop held by
 * synchronous work shows as a delay as long as the hold, read by the liveness URL once the loop
 * answers again (docs/operations.md "Health").
 */
export function monitorEventLoop(): EventLoopMonitor {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  let previousMaxNs = 0;
  const timer = setInterval(() => {
    previousMaxNs = histogram.max;
    histogram.reset();
  }, WINDOW_MS);
  timer.unref();
  return {
    delayMs: () => Math.max(previousMaxNs, histogram.max) / 1e6,
    close() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
