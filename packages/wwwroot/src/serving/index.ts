import path from 'node:path';
import type { WwwrootRuntime } from '../runtime.js';
import { createDirectoryIndex, type DirectoryIndex } from './dir-index.js';
import { createFileStore, type FileStore } from './file-store.js';
import { createFreshness, type Freshness } from './freshness.js';
import { createCompressionCache } from './compression-cache.js';

export { send } from './send.js';
export { notModified } from './conditional.js';
export { fixedBody } from './fixed-body.js';
export type { Representation, Resource } from './representation.js';
export type { FileFacts, FileStore } from './file-store.js';
export { contentTypeOf } from './file-store.js';
export { isLoaderFile, cacheHeaders } from './cache-policy.js';

/**
 * The serving engine of the module: one file store (facts, headers and small files' bytes) and
 * one directory index, shared by the shared-file handler, contract screens and the static root,
 * so a file served under two URLs is read and held once, and one contract change reaches all.
 *
 * Files the host writes (sync upload and refresh, contract sync) are dropped when their contract
 * change is published (`ctx.host.contractChanges`), before the writer answers, in every worker. The
 * folder watch would see them too, but its events arrive a little later; a client that reads right
 * after its own write must get the new bytes (docs/static-files.md "A changed file").
 *
 * Made once at module start (`createServingEngine`) and handed to the handlers that serve files.
 */
export interface ServingEngine {
  store: FileStore;
  dirs: DirectoryIndex;
  /** Folder watch that spares the per-request stat. */
  freshness: Freshness;
  /** Listeners called after the engine dropped a file a contract change named. */
  onInvalidate(fn: (absolute: string) => void): void;
  /** Stops the folder watch and the contract change subscription (when the module closes). */
  close(): void;
}

export function createServingEngine(runtime: WwwrootRuntime): ServingEngine {
  const { serving } = runtime.settings;
  const freshness = createFreshness();
  const store = createFileStore({
    maxAgeSeconds: serving.maxAgeSeconds,
    fingerprinted: serving.immutable,
    freshness,
    compression: serving.compressFiles ? createCompressionCache() : undefined,
  });
  const dirs = createDirectoryIndex(undefined, freshness);
  const listeners: Array<(absolute: string) => void> = [];
  const drop = (changed: string) => {
    const absolute = path.resolve(changed);
    store.invalidate(absolute);
    // The file's folder and every folder above it: a write may have created folders on the way.
    for (let dir = path.dirname(absolute); ; dir = path.dirname(dir)) {
      dirs.invalidate(dir);
      if (path.dirname(dir) === dir) break;
    }
    for (const fn of listeners) fn(absolute);
  };
  const stopContractChanges = runtime.ctx.host.contractChanges.subscribe((event) => event.files.forEach(drop));
  return {
    store,
    dirs,
    freshness,
    onInvalidate: (fn) => void listeners.push(fn),
    close() {
      stopContractChanges();
      freshness.close();
    },
  };
}
