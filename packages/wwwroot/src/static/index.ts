import type { RawHandler } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';

/** Contract screens under `/{ContractRequestPath}` and the static root: handlers of the static phase. */
export function createStaticHandlers(runtime: WwwrootRuntime): RawHandler[] {
  void runtime;
  return [];
}
