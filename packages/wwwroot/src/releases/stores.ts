import type { WwwrootRuntime } from '../runtime.js';
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
