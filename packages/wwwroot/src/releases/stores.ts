import { CONTRACT_TYPES } from '@ack/host/serving';
import type { WwwrootRuntime } from '../runtime.js';
import { contractFolderOf } from '../sync/module-folders.js';
import { ReleaseStore } from './store.js';

// One release store per contract folder, shared by the release endpoints and the static server,
// made with the module's `Releases:Keep` and `Releases:GraceSeconds` (docs/releases.md).

const byRuntime = new WeakMap<WwwrootRuntime, Map<string, ReleaseStore>>();

export function releaseStoreOf(runtime: WwwrootRuntime, contractDir: string): ReleaseStore {
  let stores = byRuntime.get(runtime);
  if (!stores) byRuntime.set(runtime, (stores = new Map()));
  let s = stores.get(contractDir);
  if (!s) {
    const { keep, graceSeconds } = runtime.settings.releases;
    stores.set(contractDir, (s = new ReleaseStore({ contractDir, keep, graceMs: graceSeconds * 1000 })));
  }
  return s;
}

const recoveries = new WeakMap<WwwrootRuntime, Promise<void>>();

/**
 * Recovery of every contract folder's releases (debris of a host that died removed, every prefix
 * on one whole release: docs/releases.md "Crash safety"), run once per module start, and only in
 * a process that starts with no peer serving the same home (docs/scale-out.md "Start-up work"). The module
 * waits for it before the host listens, and release requests wait for it too, or they could race
 * a removal of the stage they just began.
 */
export function recoverReleases(runtime: WwwrootRuntime): Promise<void> {
  let r = recoveries.get(runtime);
  // Beside peers already serving, what looks unfinished (a stage, a missing link) may be a peer's
  // push or switch in progress: the first worker recovered before any served.
  if (!r && runtime.ctx.host.startsBesidePeers) recoveries.set(runtime, (r = Promise.resolve()));
  if (!r) {
    r = (async () => {
      const folders = new Set(await Promise.all(CONTRACT_TYPES.map((m) => contractFolderOf(runtime, m))));
      for (const f of folders)
        await releaseStoreOf(runtime, f)
          .recover()
          .catch(() => undefined);
    })().catch(() => undefined);
    recoveries.set(runtime, r);
  }
  return r;
}
