import os from 'node:os';
import path from 'node:path';
import { SettingsError, type ListenOptions } from '@ack/host';
import { createHostPaths, loadHostSettings } from '@ack/host/settings';
import {
  checkConfiguration,
  configurationFiles,
  ensureDevCertificate,
  planEndpoints,
  Primary,
  watchConfiguration,
} from '@ack/host/cluster';
import { EXIT } from '../exit-codes.js';

/** Where the primary of `ack serve --workers` writes its pid, under the application home. */
export function pidFileOf(appDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const { file } = loadHostSettings(appDir, env);
  return path.join(createHostPaths(path.dirname(file), env).serviceHome, '.ack', 'ack.pid');
}

/**
 * `ack serve --workers N` in the primary (docs/scale-out.md): checks the settings once (a worker
 * would fail the same way N times), makes the development certificate when an HTTPS endpoint needs
 * it (N workers must not make one each), forks the workers (they run the same command line, so
 * `--port`, `--host` and `--https-port` reach them), and restarts them one at a time on SIGHUP
 * or, with `AppSettings:IsConfigurationWatching`, when appsettings.json or a module.json changes
 * and still reads.
 */
export async function servePrimary(
  appDir: string,
  workers: number,
  listen: Pick<ListenOptions, 'host' | 'tlsPort'>,
): Promise<void> {
  const log = (line: string) => process.stderr.write(`ack: ${line}\n`);
  let watching: boolean;
  let sessionsInMemory: boolean;
  let pidFile: string;
  try {
    const { settings, file } = loadHostSettings(appDir, process.env);
    watching = settings.AppSettings.IsConfigurationWatching;
    const state = settings.AppSettings.SessionState;
    sessionsInMemory = state.IsSession && state.SessionCookieName.trim() !== '' && state.CacheType === 'Memory';
    pidFile = pidFileOf(appDir);
    ensureDevCertificate(
      settings,
      createHostPaths(path.dirname(file), process.env),
      planEndpoints(settings, listen).plans,
      log,
    );
  } catch (err) {
    log((err as Error).message);
    process.exit(err instanceof SettingsError ? EXIT.usage : EXIT.failed);
  }
  const count = workers === 0 ? os.availableParallelism() : workers;
  if (count > 1 && sessionsInMemory)
    log(
      `AppSettings:SessionState:CacheType is Memory: each of the ${count} workers keeps its own sessions, so a client whose next request reaches another worker starts a new one; a shared store (MySql, PostgreSql, SqlServer, Redis) keeps them across workers (docs/scale-out.md)`,
    );
  const primary = new Primary({ workers: count, pidFile, graceMs: 10_000, log });
  process.on('SIGHUP', () => void primary.reload('SIGHUP'));
  process.on('SIGINT', () => void primary.stop('SIGINT'));
  process.on('SIGTERM', () => void primary.stop('SIGTERM'));
  const watch = watching
    ? watchConfiguration(configurationFiles(appDir, process.env), (file) => {
        const problem = checkConfiguration(appDir, process.env);
        if (problem) log(`configuration change in ${file} not applied; the workers keep serving: ${problem}`);
        else void primary.reload(`${file} changed`);
      })
    : undefined;
  try {
    await primary.start();
  } catch (err) {
    log((err as Error).message);
  }
  const code = await primary.done;
  watch?.close();
  process.exit(code);
}
