import type { ModuleContext } from '@ack/host';
import type { WwwrootSettings } from './settings/module-settings.js';

/**
 * What the wwwroot module's capabilities share: the host context and the parsed module settings.
 * Each capability folder takes this (and the serving engine, when it serves files) and returns
 * its handlers; `index.ts` only wires them in phase order.
 */
export interface WwwrootRuntime {
  ctx: ModuleContext;
  settings: WwwrootSettings;
}
