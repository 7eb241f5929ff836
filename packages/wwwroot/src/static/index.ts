import type { RawHandler } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import type { ServingEngine } from '../serving/index.js';
import { createFolderHandler, type Mount } from '../serving/folder-handler.js';
import { createServedFolder } from '../serving/served-folder.js';
import path from 'node:path';
import { withReleases } from '../releases/serving.js';
import { releaseStoreOf } from '../releases/stores.js';

/**
 * Contract screens under `/{ContractRequestPath}` (from `<ContractBasePath>/<ApplicationID>`) and
 * the static root (`WWWRootBasePath`): handlers of the static phase, one handler for both. The
 * contract mount is listed first and owns its prefix whether or not a file is found, so the static
 * root never answers under it. Folders that do not exist yet are looked up per request (cheaply),
 * so a folder created later, by sync for example, is served without a restart.
 */
export function createStaticHandlers(runtime: WwwrootRuntime, engine: ServingEngine): RawHandler[] {
  const { settings, ctx } = runtime;
  const contractRoot = path.join(settings.contractBasePath, settings.host.applicationId);
  const contractPrefix = settings.contractRequestPath
    .split('/')
    .filter(Boolean)
    .map((s) => s.toLowerCase());
  const mounts: Mount[] = [
    {
      prefix: contractPrefix,
      folder: createServedFolder(contractRoot, engine.dirs, engine.store),
      capability: { route: 'screen' },
    },
    { prefix: [], folder: createServedFolder(settings.wwwrootBasePath, engine.dirs, engine.store) },
  ];
  const folders = createFolderHandler(mounts);
  engine.onInvalidate((absolute) => folders.forget(absolute));
  ctx.logger.info(
    `contract screens: /${settings.contractRequestPath}/ from ${contractRoot}; static root: ${settings.wwwrootBasePath}`,
  );
  if (!settings.releasesEnabled) return [folders.handler];
  // Release prefixes of the contract folder: pinned by `ack-release`, removed files within grace.
  return [
    withReleases(
      {
        contractDir: settings.contractBasePath,
        mountSegments: [settings.host.applicationId],
        urlPrefix: contractPrefix,
        store: releaseStoreOf(runtime, settings.contractBasePath),
        engine,
      },
      folders.handler,
    ),
  ];
}
