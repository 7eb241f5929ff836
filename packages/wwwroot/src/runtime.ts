import type { ModuleContext } from '@ack/host';
import type { WwwrootSettings } from './settings/module-settings.js';

/**
 * What the wwwroot module's capabilities share: the host context, the parsed module settings and
 * the file cache that sync must be able to invalidate. Each capability folder takes this and
 * returns its handlers; `index.ts` only wires them in phase order.
 */
export interface WwwrootRuntime {
  ctx: ModuleContext;
  settings: WwwrootSettings;
  files: FileCacheControl;
}

/** Lets sync drop what the static, contract-screen and shared-file handlers cached for a file. */
export interface FileCacheControl {
  /** Forget anything cached for this absolute path (file content, stat, case-insensitive index). */
  invalidate(absolutePath: string): void;
  /** A handler that caches file facts registers here to hear of invalidations. */
  onInvalidate(listener: (absolutePath: string) => void): void;
}
