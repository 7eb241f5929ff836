import cluster from 'node:cluster';
import path from 'node:path';
import type { Command } from 'commander';
import { createHost, HOST_VERSION, SettingsError, type AckHost } from '@ack/host';
import { bindAddress, READY_MESSAGE, STOP_MESSAGE, type ListenerFailure } from '@ack/host/cluster';
import { builtInModules } from '../registry.js';
import { parsePort, parseWorkers } from '../options.js';
import { servePrimary } from './serve-workers.js';
import { createStaticHome, locateAppDir, type StaticHome } from './static-home.js';

export interface ServeOptions {
  appDir?: string;
  port?: number;
  host?: string;
  /** HTTPS (HTTP/2 and HTTP/1.1) on this port; without a configured certificate, the development one. */
  httpsPort?: number;
  /** `--workers N`: run as the primary of N workers (0: one per core); see docs/scale-out.md. */
  workers?: number;
}

/** The most a stop may take: the 10 s grace time for requests in flight, then 5 s for the rest. */
const STOP_LIMIT_MS = 15_000;
/**
 * `ack serve`: start the host over an application home. Exit codes: 2 for settings that cannot be
 * used (certificates included), 1 when a port is taken or start-up fails, 0 after a clean
 * SIGINT/SIGTERM shut-down.
 */
export async function serve(options: ServeOptions, dir?: string): Promise<void> {
  let appDir = path.resolve(options.appDir ?? process.cwd());
  let located: ReturnType<typeof locateAppDir> | undefined;
  if (dir !== undefined && options.appDir === undefined) {
    located = locateAppDir(path.resolve(dir));
    if ('missing' in located) {
      process.stderr.write(`ack: no such folder: ${dir}\n`);
      process.exit(2);
    }
    if ('appDir' in located) appDir = located.appDir;
  }
  if (options.workers !== undefined && cluster.isPrimary) {
    // Workers share one application home (its settings, pid file and watched configuration).
    if (located !== undefined && 'staticRoot' in located) {
      process.stderr.write(
        'ack: --workers needs an application home (a folder holding appsettings.json), not a plain folder\n',
      );
      process.exit(2);
    }
    return servePrimary(appDir, options.workers, { host: options.host, tlsPort: options.httpsPort });
  }
  let staticHome: StaticHome | undefined;
  if (located !== undefined && 'staticRoot' in located) {
    staticHome = createStaticHome(located.staticRoot);
    appDir = staticHome.appDir;
  }
  let host: AckHost;
  try {
    host = await createHost({ appDir, builtInModules, ...(staticHome ? { env: staticHome.env } : {}) });
  } catch (err) {
    staticHome?.remove();
    process.stderr.write(`ack: ${(err as Error).message}\n`);
    process.exit(err instanceof SettingsError ? 2 : 1);
  }
  if (staticHome) process.once('exit', () => staticHome.remove());
  const port = options.port ?? host.settings.AppSettings.ServerPort;
  // Loopback unless told otherwise (docs/configuration.md, ServerListenAddress): `*` or `0.0.0.0` opens every interface.
  const bindHost = bindAddress(host.settings, options.host);
  try {
    await host.listen({ port, host: bindHost, tlsPort: options.httpsPort });
  } catch (err) {
    if (err instanceof SettingsError) {
      // A certificate that cannot be used is a settings error, like any other: exit 2.
      process.stderr.write(`ack: ${err.message}\n`);
      await host.close({ graceMs: 0 });
      process.exit(2);
    }
    const {
      code,
      port: failedPort = port,
      address,
      listener,
    } = err as NodeJS.ErrnoException & { port?: number; address?: string } & Partial<ListenerFailure>;
    const where = `${address ?? bindHost ?? '*'}:${failedPort}`;
    const text =
      code === 'EADDRINUSE'
        ? `port ${failedPort} is already in use (${where}); choose another with ${portSource(listener, options)}`
        : code === 'EACCES'
          ? `no permission to listen on ${where}`
          : (err as Error).message;
    process.stderr.write(`ack: ${text}\n`);
    await host.close({ graceMs: 0 });
    process.exit(1);
  }
  const log = host.logger;
  log.info(`ack ${HOST_VERSION} on Node ${process.version}`);
  // A plain folder's home is a throw-away one: its path and modules are nothing the user chose.
  if (!staticHome) log.info(`entry base path ${host.paths.entryBasePath}`);
  if (!cluster.isWorker && host.settings.AppSettings.IsConfigurationWatching)
    log.warn(
      'AppSettings:IsConfigurationWatching is on, but a single ack serve reads its settings once: a change applies at the next start; ack serve --workers N applies it by a rolling restart (docs/scale-out.md)',
    );
  if (!staticHome)
    log.info(
      `modules loaded: ${host.modules.map((m) => m.id).join(', ') || 'none'}; skipped: ${host.skippedModules.map((m) => m.id).join(', ') || 'none'}`,
    );
  if (staticHome)
    log.info(
      `serving the folder ${path.resolve(dir!)} as a static root (no appsettings.json there; nothing is written into it)`,
    );
  const everywhere = bindHost === undefined || bindHost === '0.0.0.0' || bindHost === '::';
  const reach = everywhere
    ? `all interfaces, port ${new URL(host.url).port}`
    : isLoopback(bindHost)
      ? 'this machine only; --host 0.0.0.0 to open it'
      : bindHost;
  // The shut-down handlers are in place before the line that tells a supervisor (or a test) the host
  // is ready: a SIGTERM sent as soon as it reads that line still stops the host gracefully.
  let stopping = false;
  const stop = (signal: string, drainMs = 0) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: stopping (finishing requests in flight)`);
    // A stop that cannot finish (a module whose close never returns, a disk that stopped answering)
    // must not hold the process: past the grace time and a margin, exit anyway (docs/scale-out.md).
    // The readiness stop delay (docs/operations.md "Health") comes before the grace time.
    const limitMs = STOP_LIMIT_MS + host.settings.AppSettings.Health.StopDelaySeconds * 1000;
    setTimeout(() => {
      process.stderr.write(`ack: the stop did not finish within ${limitMs / 1000} s; exiting\n`);
      process.exit(1);
    }, limitMs).unref();
    host.close({ graceMs: 10_000, drainMs }).then(
      () => (cluster.isWorker ? leaveCluster() : process.exit(0)),
      (err: unknown) => {
        process.stderr.write(`ack: shut-down failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  log.info(`listening on ${host.url} (${reach})`);
  if (cluster.isWorker) {
    // Every listener is open: the primary may now retire the worker this one replaces.
    process.send?.({ type: READY_MESSAGE });
    // The primary retires this worker (rolling restart, shut-down); a SIGHUP meant for the
    // primary (a closed terminal reaches the whole group) must not end it.
    process.on('message', (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type === STOP_MESSAGE) stop('stop asked by the primary', 2_000);
    });
    process.on('SIGHUP', () => {});
  }
}

/**
 * A worker leaves through the cluster's own disconnect rather than exiting at once: the primary may
 * have handed this worker a connection just as its listener closed; the worker must still be there
 * to refuse it, so that the primary passes it to another worker instead of holding it unanswered.
 */
function leaveCluster(): void {
  const worker = cluster.worker;
  if (!worker) return process.exit(0);
  setTimeout(() => process.exit(0), 5_000).unref();
  worker.once('disconnect', () => process.exit(0));
  worker.disconnect();
}

/** The option or setting that chose the port of a listener that could not open (`ListenerFailure`). */
function portSource(listener: ListenerFailure['listener'] | undefined, options: ServeOptions): string {
  if (listener === 'tlsPort')
    return options.httpsPort !== undefined ? '--https-port' : 'AppSettings:ServerDevCertSslPort (or --https-port)';
  if (listener !== undefined && listener !== 'port') return listener;
  return options.port !== undefined ? '--port' : 'AppSettings:ServerPort (or --port)';
}

function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || address.startsWith('127.');
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve an application home (the folder holding appsettings.json), or any folder as a static root')
    .argument('[dir]', 'an application home (or its app/ folder), or a plain folder to serve as it is')
    .option('--app-dir <dir>', 'folder holding appsettings.json (the entry base path); default: the current folder')
    .option('--port <n>', 'port to listen on (default AppSettings:ServerPort, 8421)', parsePort)
    .option(
      '--host <addr>',
      'address to listen on, for the plain port and the --https-port listener (default AppSettings:ServerListenAddress, 127.0.0.1; 0.0.0.0 for every interface)',
    )
    .option(
      '--https-port <n>',
      'also serve HTTPS (HTTP/2 and HTTP/1.1) on this port; with no certificate configured, the development certificate (ack dev-cert)',
      parsePort,
    )
    .option(
      '--workers <n>',
      'run N worker processes behind the one port (0: one per core); SIGHUP or `ack reload` restarts them one at a time',
      parseWorkers,
    )
    .action(async (dir: string | undefined, opts: ServeOptions) => serve(opts, dir));
}
