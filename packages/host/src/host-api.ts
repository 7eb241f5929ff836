import type http from 'node:http';
import type { HostSessions, ModuleJson, ModuleRegistry } from './modules/contract.js';
import type { HostSettings } from './settings/schema.js';
import type { HostPaths } from './paths/host-paths.js';
import type { LoggingOptions } from './logging/create-logging.js';
import type { Logger } from './logging/logger.js';
import type { Keyring } from './keys/keyring.js';
import type { LoadedModule, SkippedModule } from './modules/load-modules.js';
import type { ListenOptions, ListeningEndpoint } from './lifecycle/listeners.js';
import type { Upgrades } from './websocket/index.js';

/** What `createHost` takes and what it gives back (docs/api.md). */
export interface CreateHostOptions {
  /** Folder holding appsettings.json: the entry base path. */
  appDir: string;
  /**
   * Modules given in code, by module id. Each must be loaded: named in `AppSettings:LoadModules`,
   * with a `module.json` in its folder or in `moduleSettings`; otherwise `createHost` fails and says
   * why (docs/api.md).
   */
  modules?: ModuleRegistry;
  /**
   * Implementations to use when `AppSettings:LoadModules` names them, and to pass over otherwise
   * (the `ack` command's built-in modules).
   */
  builtInModules?: ModuleRegistry;
  /** The `module.json` of a module given in code, for when its folder has none. */
  moduleSettings?: Readonly<Record<string, ModuleJson>>;
  env?: NodeJS.ProcessEnv;
  logging?: LoggingOptions;
}

export interface AckHost {
  readonly settings: HostSettings;
  readonly settingsFile: string;
  readonly paths: HostPaths;
  readonly logger: Logger;
  readonly keys: Keyring;
  readonly modules: readonly LoadedModule[];
  readonly skippedModules: readonly SkippedModule[];
  readonly server: http.Server;
  /** WebSocket handling: attach it to any other server that should accept the modules' sockets. */
  readonly upgrades: Upgrades;
  /** The session state when `SessionState:IsSession` is on: the store, and `shared` for a store every process shares (docs/sessions.md). */
  readonly sessions: HostSessions;
  /** Base URL once listening, e.g. `http://127.0.0.1:8421`. */
  readonly url: string;
  /** Base URL of the `ServerDevCert*` HTTPS listener (HTTP/2 and HTTP/1.1) once listening, else empty. */
  readonly tlsUrl: string;
  /** Every listener but the plain `ServerPort` one: the HTTPS listener and `Kestrel:Endpoints`. */
  readonly endpoints: readonly ListeningEndpoint[];
  listen(options?: ListenOptions): Promise<string>;
  /**
   * Stops accepting, lets requests in flight finish (bounded), closes modules, flushes logs.
   * `drainMs`: first answer requests with `Connection: close` for up to that long (rolling restart).
   */
  close(options?: { graceMs?: number; drainMs?: number }): Promise<void>;
}
