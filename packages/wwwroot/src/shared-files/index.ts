import type { RawHandler } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';

/** Shared-file catalog and manifest (spec 2.1, 2.2, 4.4): handlers of the public phase. */
export function createSharedFileHandlers(runtime: WwwrootRuntime): RawHandler[] {
  void runtime;
  return [];
}
