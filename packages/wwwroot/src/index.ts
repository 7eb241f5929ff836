import fs from 'node:fs';
import type { AckModuleFactory, ModuleContributions } from '@ack/host';
import { parseWwwrootSettings } from './settings/module-settings.js';
import type { FileCacheControl, WwwrootRuntime } from './runtime.js';
import { createSharedFileHandlers } from './shared-files/index.js';
import { createStaticHandlers } from './static/index.js';
import { createSyncRouter } from './sync/index.js';
import { createDevSignInRouter } from './dev-sign-in/index.js';
import { createIndexApiRouter } from './index-api/index.js';
import { createHtmxRouter } from './htmx/index.js';
import { createLoaderRouter, LOADER_MOUNT } from './loader/index.js';

export { parseWwwrootSettings } from './settings/module-settings.js';
export type { WwwrootSettings, WwwrootSettingsSource, DevAccountSetting } from './settings/module-settings.js';

/**
 * The `wwwroot` module (spec §1): shared files and the manifest in the public phase; sync,
 * dev sign-in, index helper and htmx APIs under `/wwwroot/api`; contract screens and the static
 * root in the static phase.
 */
export const wwwrootModule: AckModuleFactory = (ctx) => {
  const settings = parseWwwrootSettings(ctx);
  for (const warning of settings.warnings) ctx.logger.warn(warning);
  if (!fs.existsSync(settings.wwwrootBasePath)) {
    ctx.logger.warn(`static root ${settings.wwwrootBasePath} does not exist (ModuleConfig:WWWRootBasePath): static requests will be answered 404 until it does`);
  }
  const invalidators: Array<(absolutePath: string) => void> = [];
  const files: FileCacheControl = {
    invalidate: (p) => invalidators.forEach((fn) => fn(p)),
    onInvalidate: (fn) => void invalidators.push(fn),
  };
  const runtime: WwwrootRuntime = { ctx, settings, files };

  const contributions: ModuleContributions = {
    public: createSharedFileHandlers(runtime),
    static: createStaticHandlers(runtime),
    routes: [
      { mount: '/wwwroot/api/sync', handler: createSyncRouter(runtime) },
      { mount: '/wwwroot/api/dev-account', handler: createDevSignInRouter(runtime) },
      { mount: '/wwwroot/api/index', handler: createIndexApiRouter(runtime) },
      { mount: '/wwwroot/api/htmx', handler: createHtmxRouter(runtime) },
      { mount: LOADER_MOUNT, handler: createLoaderRouter(runtime) },
    ],
  };
  return contributions;
};

export default wwwrootModule;
export { loadCatalog, buildCatalog, secretTargetReason, MANIFEST_PATH } from './shared-files/catalog.js';
export type { CatalogResult, RefusedItem, SharedFileCatalog, SharedFileItem } from './shared-files/catalog.js';
