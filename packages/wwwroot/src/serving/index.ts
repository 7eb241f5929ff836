import path from 'node:path';
import type { WwwrootRuntime } from '../runtime.js';
import { createDirectoryIndex, type DirectoryIndex } from './dir-index.js';
import { createFileStore, type FileStore } from './file-store.js';
import { createFreshness, type Freshness } from './freshness.js';
import { createCompressionCache } from './compression-cache.js';

export { sendFile } from './send-file.js';
export { notModified } from './conditional.js';
export { fixedBody, sendBuffer, type FixedBody } from './send-buffer.js';
export type { FileFacts, FileStore } from './file-store.js';
export { contentTypeOf } from './file-store.js';
export { isLoaderFile, cacheHeaders } from './cache-policy.js';

/**
 * The serving engine of the module: one file store (facts, headers and small files' bytes) and
 * one directory index, shared by the shared-file handler, contract screens and the static root,
 * so a file served under two URLs is read and held once, and one invalidation reaches all.
 */
export interface ServingEngine {
  store: FileStore;
  dirs: DirectoryIndex;
  /** Folder watch that spares the per-request stat; closed when the module closes. */
  freshness: Freshness;
  /** Listeners called after the engine dropped a file the sync API changed. */
  onInvalidate(fn: (absolute: string) => void): void;
}

const engines = new WeakMap<WwwrootRuntime, ServingEngine>();

export function engineFor(runtime: WwwrootRuntime): ServingEngine {
  let engine = engines.get(runtime);
  if (engine) return engine;
  const app = runtime.ctx.settings.AppSettings;
  const freshness = createFreshness();
  const store = createFileStore({
    maxAgeSeconds: app.StaticFileCacheMaxAge,
    fingerprinted: app.StaticFileImmutablePattern ? new RegExp(app.StaticFileImmutablePattern, 'i') : undefined,
    freshness,
    compression: app.UseResponseComression ? createCompressionCache() : undefined,
  });
  const dirs = createDirectoryIndex(undefined, freshness);
  const listeners: Array<(absolute: string) => void> = [];
  runtime.files.onInvalidate((changed) => {
    const absolute = path.resolve(changed);
    store.invalidate(absolute);
    dirs.invalidate(path.dirname(absolute));
    for (const fn of listeners) fn(absolute);
  });
  engine = { store, dirs, freshness, onInvalidate: (fn) => void listeners.push(fn) };
  engines.set(runtime, engine);
  return engine;
}
