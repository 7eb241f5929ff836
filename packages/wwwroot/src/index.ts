import fs from 'node:fs';
import { recoverReleases } from './releases/stores.js';
import type { AckModuleFactory, ModuleContributions } from '@ack/host';
import { parseWwwrootSettings } from './settings/module-settings.js';
import type { WwwrootRuntime } from './runtime.js';
import { createSharedFileHandlers } from './shared-files/index.js';
import { createStaticHandlers } from './static/index.js';
import { createSyncRouter } from './sync/index.js';
import { createDevSignInRouter } from './dev-sign-in/index.js';
import { createScreenHelperRouter } from './screen-helpers/index.js';
import { createHtmxRouter } from './htmx/index.js';
import { createLiveReload, LIVE_RELOAD_PATH } from './live-reload/index.js';
import { createLoaderRouter, LOADER_MOUNT } from './loader/index.js';
import { createServingEngine } from './serving/index.js';

export { parseWwwrootSettings } from './settings/module-settings.js';
export type { WwwrootSettings, DevAccountSetting, ModuleSettingsSource } from './settings/module-settings.js';
export { wwwrootProblems } from './problem-codes.js';

/**
 * The `wwwroot` module (docs/architecture.md): shared files and the manifest in the public phase; sync,
 * dev sign-in, index helper and htmx APIs under `/wwwroot/api`; contract screens and the static
 * root in the static phase; in development, the live-reload socket.
 */
export const wwwrootModule: AckModuleFactory = async (ctx) => {
  const settings = parseWwwrootSettings(ctx);
  for (const warning of settings.warnings) ctx.logger.warn(warning);
  if (!fs.existsSync(settings.wwwrootBasePath)) {
    ctx.logger.warn(
      `static root ${settings.wwwrootBasePath} does not exist (ModuleConfig:WWWRootBasePath): static requests will be answered 404 until it does`,
    );
  }
  const runtime: WwwrootRuntime = { ctx, settings };
  // Releases a host left mid-push are made whole before the first request is served, not during
  // the first requests (docs/releases.md "Crash safety").
  if (settings.releasesEnabled) await recoverReleases(runtime);
  // One serving engine for the shared files, contract screens and the static root: a file served
  // under two URLs is held once, and one contract change drops it for all.
  const engine = createServingEngine(runtime);

  // The manifest tells the loader where the live-reload socket is (exposed for screens on another origin).
  const liveReloadHeaders: Record<string, string> = settings.liveReload
    ? { 'Ack-Live-Reload': LIVE_RELOAD_PATH, 'Access-Control-Expose-Headers': 'Ack-Live-Reload' }
    : {};
  const shared = createSharedFileHandlers(runtime, engine.store, liveReloadHeaders);
  const liveReload = settings.liveReload ? createLiveReload(runtime, shared.catalog) : undefined;

  const contributions: ModuleContributions = {
    public: shared.handlers,
    static: createStaticHandlers(runtime, engine),
    // The metrics' route labels (docs/operations.md "Metrics").
    capabilities: { public: 'shared-file', static: 'static' },
    routes: [
      { mount: '/wwwroot/api/sync', handler: createSyncRouter(runtime), capability: 'sync' },
      { mount: '/wwwroot/api/dev-account', handler: createDevSignInRouter(runtime), capability: 'sign-in' },
      { mount: '/wwwroot/api/index', handler: createScreenHelperRouter(runtime), capability: 'index-api' },
      { mount: '/wwwroot/api/htmx', handler: createHtmxRouter(runtime), capability: 'htmx' },
      { mount: LOADER_MOUNT, handler: createLoaderRouter(runtime), capability: 'loader' },
    ],
    upgrades: liveReload ? [liveReload.upgrade] : [],
    close: () => {
      liveReload?.close();
      engine.close();
    },
  };
  return contributions;
};

export default wwwrootModule;
export { loadCatalog, buildCatalog, secretTargetReason, MANIFEST_PATH } from './shared-files/catalog.js';
export type { CatalogResult, RefusedItem, SharedFileCatalog, SharedFileItem } from './shared-files/catalog.js';
