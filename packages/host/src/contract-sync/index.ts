import type { ModuleRoutes } from '../modules/contract.js';
import type { HostSettings } from '../settings/schema.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from '../logging/logger.js';

/** `POST /contractsync` (spec 4.5), only when `UseContractSync`. (Filled in by the sync issue.) */
export function createContractSyncRoutes(settings: HostSettings, paths: HostPaths, logger: Logger): ModuleRoutes[] {
  void settings;
  void paths;
  void logger;
  return [];
}
