import type http from 'node:http';
import path from 'node:path';
import express, { type Express } from 'express';
import compression from 'compression';
import type {
  AckRequest,
  ContractChange,
  ContractSyncEvent,
  HostServices,
  HostSessions,
  ModuleJson,
  ModuleRegistry,
  ModuleRoutes,
  RawHandler,
} from './modules/contract.js';
import { loadHostSettings, SettingsError } from './settings/load.js';
import { redactSettings } from './settings/redact.js';
import type { HostSettings } from './settings/schema.js';
import { createHostPaths, type HostPaths } from './paths/host-paths.js';
import { createHostLogging, type LoggingOptions } from './logging/create-logging.js';
import type { Logger } from './logging/logger.js';
import { createKeyring, type Keyring } from './keys/keyring.js';
import { loadModules, type LoadedModule, type SkippedModule } from './modules/load-modules.js';
import { createEdge } from './pipeline/edge/index.js';
import { createFailureThrottle } from './pipeline/edge/failure-throttle.js';
import { createCrossSiteGuard } from './pipeline/edge/cross-site.js';
import { parseTimeSpanMs } from './settings/time-span.js';
import { runHandlers, type PhaseHandler } from './pipeline/run-handlers.js';
import { createErrorResponder, sendNotFound } from './pipeline/errors.js';
import { createSessionState, type SessionState } from './session/create-session.js';
import { createRevocationList, createSignInPhase, createSignInService } from './sign-in/index.js';
import { createContractSyncRoutes } from './contract-sync/index.js';
import { createInvalidationBus, describeInvalidation } from './cluster/invalidation.js';
import { Listeners, type ListenOptions, type ListeningEndpoint } from './lifecycle/listeners.js';
import { createConnectionGuard } from './lifecycle/connection-guard.js';
import { adaptHttp2, headerListBytes, MAX_HEADER_BYTES } from './pipeline/http2-adapter.js';
import { createHttp1Express, createHttp2Express } from './pipeline/express-apps.js';
import { createHttp2StreamLane } from './pipeline/http2-stream-lane.js';
import { sendProblem } from './http/problem.js';
import { UploadFlow } from './fs/upload-flow.js';
import { createBodyReaders } from './http/read-body.js';
import { createUpgrades, upgradeRequiredRoutes, type Upgrades } from './websocket/index.js';

export type { ListenOptions, ListeningEndpoint };

export const HOST_VERSION = '0.1.0';

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

/**
 * Builds the host: settings, logging, modules and the request pipeline (docs/pipeline.md). Phases:
 * edge → public → [static, for GET/HEAD outside route prefixes] → Express (session, sign-in,
 * host and module routes) → not found → errors. Static requests are answered in front of Express's
 * router because they are most of a screen host's traffic; no route prefix is ever served by a
 * static handler, so the outcome is the one the phase order defines.
 */
export async function createHost(options: CreateHostOptions): Promise<AckHost> {
  const env = options.env ?? process.env;
  const { settings, file: settingsFile, warnings } = loadHostSettings(options.appDir, env);
  const paths = createHostPaths(path.dirname(settingsFile), env);
  const logging = createHostLogging(settings, paths, options.logging);
  const logger = logging.logger;
  logger.debug('effective settings ' + JSON.stringify(redactSettings(settings)));
  for (const warning of warnings) logger.warn(warning);
  const app = settings.AppSettings;
  const keys = createKeyring(
    app.Security.SigningKey,
    path.join(paths.serviceHome, '.ack', 'signing.key'),
    app.Security.PreviousSigningKeys,
  );

  // Before the modules: a shared store that cannot be reached stops start-up (docs/sessions.md).
  let sessionState: SessionState | undefined;
  try {
    sessionState = await createSessionState(
      app.SessionState,
      keys.keys('session').map((k) => k.toString('hex')),
      settingsFile,
      logger.child('session'),
    );
  } catch (err) {
    await logging.close();
    throw err;
  }

  const hostSessions: HostSessions = { store: sessionState?.store, sharedStore: sessionState?.shared };
  const accessChecks = createFailureThrottle(
    app.Security.MaxFailedAccessChecks,
    parseTimeSpanMs(app.Security.FailedAccessCheckWindow),
    logger.child('access'),
  );

  let selfUrl = '';
  const loaded: LoadedModule[] = [];
  // Every upload flow, so that a stop can abort the uploads in flight and remove their staged files.
  const uploadFlows: UploadFlow[] = [];
  // Cache invalidations and contract sync events reach every worker of `ack serve --workers` (docs/scale-out.md).
  const invalidation = createInvalidationBus();
  // Sign-outs reach the other workers (the bus) and, when every process shares it, the session store
  // (docs/dev-sign-in.md "Sign-out holds").
  const revocations = createRevocationList({
    sharedStore: sessionState?.shared,
    file: path.join(paths.serviceHome, '.ack', 'sign-outs'),
    logger: logger.child('sign-in'),
    announce: (tokenId, expiresAt) => invalidation.publish({ kind: 'sign-out', tokenId, expiresAt }),
  });
  const signInService = createSignInService(settings, keys, logger.child('sign-in'), revocations);
  const contractSyncListeners = new Set<(event: ContractSyncEvent) => void>();
  const deliverContractSync = (event: ContractSyncEvent) => {
    for (const listener of contractSyncListeners) {
      try {
        listener(event);
      } catch (err) {
        logger.error('a contract sync listener failed', err as Error);
      }
    }
  };
  // Contract sync written through this process: its listeners hear it, and so do the other workers'.
  const emitContractSync = (event: ContractSyncEvent) => {
    deliverContractSync(event);
    invalidation.publish({ kind: 'contract-sync', event });
  };
  const refreshContract = async (moduleId: string, change: ContractChange) => {
    const target = loaded.find((m) => m.id.toLowerCase() === moduleId.toLowerCase());
    if (!target?.contributions.refreshContract) return false;
    await target.contributions.refreshContract(change);
    return true;
  };
  // Another worker took a sync upload or a contract sync: this worker's caches and listeners hear it too.
  invalidation.subscribe((event, origin) => {
    if (origin !== 'peer') return;
    logger.debug(`cache invalidation from another worker: ${describeInvalidation(event)}`);
    if (event.kind === 'contract') {
      refreshContract(event.moduleId, event.change).catch((err: unknown) =>
        logger.error(`module ${event.moduleId} failed to refresh its contracts`, err as Error),
      );
    } else if (event.kind === 'contract-sync') {
      deliverContractSync(event.event);
    } else if (event.kind === 'sign-out') {
      revocations.heard(event.tokenId, event.expiresAt);
    }
  });
  const services: HostServices = {
    selfUrl: () => selfUrl,
    keys,
    createRouter: () => express.Router(),
    loadedModules: () => loaded.map((m) => m.id),
    signIn: signInService,
    accessChecks,
    refuseCrossSite: createCrossSiteGuard(app.WithOrigins),
    bodies: createBodyReaders(settings.Kestrel.Limits.MaxRequestBodySize),
    createUploadFlow(flowOptions) {
      const flow = new UploadFlow({
        ...flowOptions,
        maxBodyBytes: settings.Kestrel.Limits.MaxRequestBodySize,
        stagingDir: path.join(paths.serviceHome, '.ack', 'uploads'),
      });
      uploadFlows.push(flow);
      return flow;
    },
    onContractSync(listener) {
      contractSyncListeners.add(listener);
      return () => void contractSyncListeners.delete(listener);
    },
    invalidation,
    sessions: hostSessions,
    async notifyContractChange(moduleId: string, change: ContractChange) {
      const refreshed = await refreshContract(moduleId, change);
      if (refreshed) invalidation.publish({ kind: 'contract', moduleId, change });
      return refreshed;
    },
  };

  // A start-up that fails from here on (a module, an endpoint setting) must not leave the session
  // store's connections open.
  const abandon = async (err: unknown): Promise<never> => {
    invalidation.close();
    await sessionState?.close().catch(() => {});
    throw err;
  };
  let result: Awaited<ReturnType<typeof loadModules>>;
  try {
    const registry = { ...options.builtInModules, ...options.modules };
    result = await loadModules(settings, paths, registry, logger, services, {
      addModuleLogFile: logging.addLabelFile,
      inline: options.moduleSettings ?? {},
    });
    requireGivenModules(Object.keys(options.modules ?? {}), result, settings.AppSettings.LoadModules, paths);
  } catch (err) {
    return abandon(err);
  }
  loaded.push(...result.loaded);

  const edge = createEdge(settings, paths, logger);
  // The access file holds the combined lines alone, so that log tools read it as they are.
  if (app.UseHttpLogging && app.AccessLogFilePath.trim() !== '')
    logging.addLabelFile('http', paths.resolve(app.AccessLogFilePath), '{Message:lj}{NewLine}');
  const publicHandlers: RawHandler[] = loaded.flatMap((m) => m.contributions.public ?? []);
  const staticHandlers: RawHandler[] = loaded.flatMap((m) => m.contributions.static ?? []);
  const routes: ModuleRoutes[] = [
    ...createContractSyncRoutes(settings, paths, services, logger.child('contractsync'), emitContractSync),
    ...loaded.flatMap((m) => m.contributions.routes ?? []),
    ...upgradeRequiredRoutes(loaded.flatMap((m) => m.contributions.upgrades ?? [])),
  ];
  const routePrefixes = routes.map((r) => r.mount.replace(/\/+$/, '').toLowerCase());
  const underRoute = (p: string) => {
    return routePrefixes.some((prefix) => p === prefix || p.startsWith(prefix + '/'));
  };

  const respondError = createErrorResponder({
    showExceptionDetail: app.IsExceptionDetailText && app.RunningEnvironment === 'D',
    logger,
  });

  // One Express application per protocol over the same middleware and routers: HTTP/2 requests
  // need Express's methods on the HTTP/2 classes (pipeline/http2-adapter.ts, docs/protocols.md).
  // Both, and WebSocket upgrades, share the one session middleware and its store.
  const sessionMiddleware = sessionState?.middleware;
  const signIn = createSignInPhase(signInService);
  const mountRoutes = (expressApp: Express): Express => {
    expressApp.disable('x-powered-by');
    expressApp.set('etag', false);
    // Express (and express-session's `secure: 'auto'`) trusts X-Forwarded-Proto from exactly the
    // proxies the edge trusts, so a session cookie is Secure when the client came over HTTPS.
    expressApp.set('trust proxy', (address: string) => edge.trustsProxy(address));
    // `UseResponseComression` compresses what the routes answer; files are compressed once by the
    // module that serves them (docs/static-files.md), so the lean phases never pay for it.
    if (app.UseResponseComression) expressApp.use(compression());
    if (sessionMiddleware) expressApp.use(sessionMiddleware);
    expressApp.use(signIn);
    for (const route of routes) expressApp.use(route.mount, route.handler);
    expressApp.use((req, res) => sendNotFound(req, res));
    expressApp.use((err: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
      respondError(err, req, res);
    });
    return expressApp;
  };
  const http1App = mountRoutes(createHttp1Express());
  const http2App = mountRoutes(createHttp2Express());

  // The raw phases as one list per Express application, run by one runner (docs/pipeline.md):
  // edge, public, then static for a GET or HEAD outside every route mount; the rest goes to Express.
  const rawPhases = (expressApp: Express): PhaseHandler<AckRequest, http.ServerResponse>[] => [
    ...edge.handlers,
    ...publicHandlers,
    (req, res, next) => {
      // Outside every route prefix Express holds nothing for a GET/HEAD but the 404 (session and
      // sign-in only read cookies): static answers it, without minting a session for every miss.
      if (
        (req.method === 'GET' || req.method === 'HEAD') &&
        staticHandlers.length > 0 &&
        !underRoute(req.ack.path.folded)
      )
        return next();
      expressApp(req, res);
    },
    ...staticHandlers,
  ];
  const http1Phases = rawPhases(http1App);
  const http2Phases = rawPhases(http2App);

  const onRequest = (
    req: AckRequest,
    res: http.ServerResponse,
    phases: readonly PhaseHandler<AckRequest, http.ServerResponse>[],
  ) => {
    try {
      edge.begin(req);
    } catch (err) {
      return respondError(err, req, res);
    }
    runHandlers(phases, req, res, sendNotFound, respondError);
  };

  const upgrades = createUpgrades({
    settings,
    edge,
    upgrades: loaded.flatMap((m) => m.contributions.upgrades ?? []),
    requestPhases: [sessionMiddleware, signIn].filter((phase) => phase !== undefined),
    logger: logger.child('websocket'),
  });
  // Endpoint settings are checked here.
  let listeners: Listeners;
  try {
    listeners = new Listeners(
      settings,
      paths,
      {
        http1: (req, res) => onRequest(req as AckRequest, res, http1Phases),
        // HTTP/2 GET/HEAD outside the route mounts: the raw phases on the stream API, no Express.
        http2Stream:
          staticHandlers.length > 0
            ? createHttp2StreamLane({
                edge,
                phases: [...edge.handlers, ...publicHandlers, ...staticHandlers],
                underRoute,
                respondError,
              })
            : undefined,
        http2: (request, response) => {
          const { req, res } = adaptHttp2(http2App, request, response);
          // HTTP/1.1 gets this 431 from Node's parser; HTTP/2 from here (pipeline/http2-adapter.ts).
          if (headerListBytes(request.rawHeaders) > MAX_HEADER_BYTES) {
            return sendProblem(
              res,
              {
                status: 431,
                code: 'request.headers_too_large',
                detail: `The request headers are over ${MAX_HEADER_BYTES} bytes.`,
              },
              req.method,
            );
          }
          onRequest(req, res, http2Phases);
        },
        clientError: edge.clientError,
      },
      logger,
      createConnectionGuard(settings.Kestrel.Limits, edge.trustsProxy, logger),
      upgrades,
    );
  } catch (err) {
    return abandon(err);
  }

  let closing: Promise<void> | undefined;
  const host: AckHost = {
    settings,
    settingsFile,
    paths,
    logger,
    keys,
    modules: loaded,
    skippedModules: result.skipped,
    server: listeners.server,
    upgrades,
    sessions: hostSessions,
    get url() {
      return selfUrl;
    },
    async listen(listenOptions = {}) {
      selfUrl = await listeners.listen(listenOptions);
      return selfUrl;
    },
    get tlsUrl() {
      return listeners.tlsUrl;
    },
    get endpoints() {
      return listeners.endpoints;
    },
    close({ graceMs = 10_000, drainMs = 0 } = {}) {
      closing ??= (async () => {
        // A worker retired in a rolling restart first tells its clients to go elsewhere (docs/scale-out.md).
        if (drainMs > 0) await listeners.drain(drainMs);
        // Uploads in flight are refused (503) and their staged files removed before anything else.
        await Promise.all(uploadFlows.map((flow) => flow.close()));
        // Then sockets: an open WebSocket would hold its listener open for the whole grace time.
        await upgrades.closeAll(Math.min(graceMs, 2_000));
        await listeners.close(graceMs);
        for (const m of [...loaded].reverse()) {
          try {
            await m.contributions.close?.();
          } catch (err) {
            logger.error(`module ${m.id} failed to close`, err as Error);
          }
        }
        accessChecks.close();
        invalidation.close();
        await sessionState
          ?.close()
          .catch((err: unknown) => logger.error('session store failed to close', err as Error));
        await logging.close();
      })();
      return closing;
    },
  };

  for (const s of result.skipped) logger.info(`module ${s.id} skipped: ${s.reason}`);
  for (const m of loaded) logger.info(`module ${m.id} loaded from ${m.directory}`);
  if (loaded.length === 0) {
    logger.warn(
      `no module loaded: every request will be answered 404 (AppSettings:LoadModules names ${app.LoadModules.length === 0 ? 'none' : app.LoadModules.join(', ')}; modules are looked for in ${paths.resolve(app.LoadModuleBasePath)})`,
    );
  }
  return host;
}

/**
 * A module handed to `createHost` in code that did not load is a mistake, not a choice: the host
 * would otherwise start without it and answer 404 for its routes (docs/api.md).
 */
function requireGivenModules(
  given: readonly string[],
  result: { loaded: readonly LoadedModule[]; skipped: readonly SkippedModule[] },
  loadModules: readonly string[],
  paths: HostPaths,
): void {
  for (const id of given) {
    if (result.loaded.some((m) => m.id === id)) continue;
    const skipped = result.skipped.find((m) => m.id === id);
    throw new SettingsError(
      skipped
        ? `module ${id} was given to createHost but could not be loaded: ${skipped.reason} (put a module.json there, or pass its settings in moduleSettings)`
        : `module ${id} was given to createHost but AppSettings:LoadModules in ${path.join(paths.entryBasePath, 'appsettings.json')} does not name it (it names ${loadModules.length === 0 ? 'none' : loadModules.join(', ')})`,
    );
  }
}
