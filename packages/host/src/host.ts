import path from 'node:path';
import { loadHostSettings } from './settings/load.js';
import { redactSettings } from './settings/redact.js';
import { createHostPaths } from './paths/host-paths.js';
import { createHostLogging } from './logging/create-logging.js';
import { createKeyring } from './keys/keyring.js';
import { loadModules, logModuleOutcome, requireGivenModules, type LoadedModule } from './modules/load-modules.js';
import { createHostServices } from './host-services.js';
import { createEdge } from './pipeline/edge/index.js';
import { createErrorResponder } from './pipeline/errors.js';
import { collectRaw, collectRoutes, collectUpgrades, createPipeline } from './pipeline/phases.js';
import { createSessionState, type SessionState } from './session/create-session.js';
import { createSignInPhase } from './sign-in/index.js';
import { createContractSyncRoutes } from './contract-sync/index.js';
import { Listeners, type ListenOptions, type ListeningEndpoint } from './lifecycle/listeners.js';
import { createConnectionGuard } from './lifecycle/connection-guard.js';
import { abandonStart, stopHost } from './lifecycle/shutdown.js';
import { createUpgrades } from './websocket/index.js';
import { createHealth } from './health/index.js';
import { createTracing } from './tracing/index.js';
import type { AckHost, CreateHostOptions } from './host-api.js';
import { createHostMetrics, NO_COUNTERS } from './metrics/host-metrics.js';
import { createOperationsRoutes, operationsGuard } from './metrics/operations.js';
import { createStatusPage } from './status/index.js';
import { inClusterWorker, workerMetricsSource } from './cluster/metrics.js';

export type { ListenOptions, ListeningEndpoint };
export type { AckHost, CreateHostOptions };

export const HOST_VERSION = '0.1.0';

/**
 * Builds the host (docs/architecture.md "Start-up"): settings, logging and keys; the session
 * store; the services modules receive; the modules; the pipeline (docs/pipeline.md) and the
 * listeners. Each step is a function of the folder that owns it; this only wires them.
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

  // Before the modules, which make outgoing calls through it; off unless OTEL_* asks (docs/operations.md).
  const tracing = createTracing(logger, HOST_VERSION);
  const metrics = app.UseMetrics ? createHostMetrics() : undefined;
  if (metrics && sessionState?.shared)
    sessionState.shared.observeCall = metrics.sessionStoreCalls(sessionState.shared.kind);
  let selfUrl = '';
  const loaded: LoadedModule[] = [];
  const { services, bus, uploadFlows, accessChecks } = createHostServices({
    settings,
    paths,
    keys,
    logger,
    sessionState,
    traces: tracing.traces,
    selfUrl: () => selfUrl,
    modules: () => loaded,
    counters: metrics?.counters ?? NO_COUNTERS,
  });
  const health = createHealth(app.Health, sessionState?.shared, logger.child('health'));
  const opened = { bus, sessionState, accessChecks, health, tracing };

  let result: Awaited<ReturnType<typeof loadModules>>;
  try {
    const registry = { ...options.builtInModules, ...options.modules };
    result = await loadModules(settings, paths, registry, logger, services, {
      addModuleLogFile: logging.addLabelFile,
      inline: options.moduleSettings ?? {},
    });
    requireGivenModules(Object.keys(options.modules ?? {}), result, app.LoadModules, paths);
  } catch (err) {
    return abandonStart(opened, err);
  }
  loaded.push(...result.loaded);
  health.state.setFailedModules(result.skipped.filter((m) => m.failed).map((m) => m.id));

  // The status page reads the registry /metrics renders (docs/operations.md "Status page").
  const statusPage =
    metrics && app.UseStatusPage && app.StatusPagePath !== ''
      ? createStatusPage({
          path: app.StatusPagePath,
          registry: metrics.registry,
          health: health.state,
          sessionStore: { shared: sessionState?.shared !== undefined },
          guarded: operationsGuard(settings, services, logger.child('operations')),
          inWorker: inClusterWorker(),
        })
      : undefined;
  const edge = createEdge(
    settings,
    paths,
    logger,
    tracing,
    statusPage ? [health.handler, statusPage.edge] : [health.handler],
    metrics,
  );
  // The access file holds the combined lines alone, so that log tools read it as they are.
  if (app.UseHttpLogging && app.AccessLogFilePath.trim() !== '')
    logging.addLabelFile('http', paths.resolve(app.AccessLogFilePath), '{Message:lj}{NewLine}');
  // Both protocols' Express applications and WebSocket upgrades share the one session middleware.
  const middleware = [sessionState?.middleware, createSignInPhase(services.signIn)].filter((m) => m !== undefined);
  const pipeline = createPipeline({
    edge,
    public: collectRaw(loaded, 'public'),
    middleware,
    routes: collectRoutes(
      [
        ...createOperationsRoutes({
          settings,
          services,
          logger: logger.child('operations'),
          version: HOST_VERSION,
          metrics: metrics && (inClusterWorker() ? workerMetricsSource(metrics.registry) : metrics.render),
          modules: () => loaded,
        }),
        ...(statusPage?.routes ?? []),
        ...createContractSyncRoutes(settings, paths, services, logger.child('contractsync')),
      ],
      loaded,
    ),
    static: collectRaw(loaded, 'static'),
    compressRoutes: app.UseResponseComression,
    respondError: createErrorResponder({
      showExceptionDetail: app.IsExceptionDetailText && app.RunningEnvironment === 'D',
      logger,
    }),
  });
  const upgrades = createUpgrades({
    settings,
    edge,
    upgrades: collectUpgrades(loaded),
    requestPhases: middleware,
    logger: logger.child('websocket'),
  });
  // Endpoint settings are checked here.
  let listeners: Listeners;
  try {
    listeners = new Listeners(
      settings,
      paths,
      { ...pipeline, clientError: edge.clientError },
      logger,
      createConnectionGuard(settings.Kestrel.Limits, edge.trustsProxy, logger),
      upgrades,
      metrics?.observeServer,
    );
  } catch (err) {
    return abandonStart(opened, err);
  }

  const running = { ...opened, listeners, upgrades, uploadFlows, modules: loaded, logging, logger };
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
    sessions: services.sessions,
    get url() {
      return selfUrl;
    },
    async listen(listenOptions = {}) {
      selfUrl = await listeners.listen(listenOptions);
      health.state.markStarted();
      return selfUrl;
    },
    get tlsUrl() {
      return listeners.tlsUrl;
    },
    get endpoints() {
      return listeners.endpoints;
    },
    close({ graceMs = 10_000, drainMs = 0 } = {}) {
      closing ??= stopHost(running, { graceMs, drainMs });
      return closing;
    },
  };
  logModuleOutcome(result, settings, paths, logger);
  return host;
}
