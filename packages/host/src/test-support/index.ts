import fs from 'node:fs';
import { afterEach } from 'vitest';
import os from 'node:os';
import path from 'node:path';
import { createHost, type AckHost } from '../host.js';
import type { ModuleRegistry } from '../modules/contract.js';

/**
 * Test support: a throw-away application home (the layout of docs/architecture.md) and a host listening on a free
 * loopback port, so that tests talk to a real socket.
 */
export interface TestHome {
  /** `<home>` (SERVICE_HOME). */
  home: string;
  /** `<home>/app`, where appsettings.json lives (the entry base path). */
  appDir: string;
  /** Writes a file under the home (creating folders); text or bytes. Returns its absolute path. */
  write(relative: string, content: string | Buffer | object): string;
  remove(): void;
}

/** `under`: a folder name the home is made inside (for example a dot folder), itself in a fresh temp folder. */
export function createTestHome(
  appSettings: object = {},
  files: Record<string, string | Buffer | object> = {},
  options: { under?: string } = {},
): TestHome {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-test-'));
  const home = options.under === undefined ? top : path.join(top, options.under, 'home');
  fs.mkdirSync(home, { recursive: true });
  const appDir = path.join(home, 'app');
  const write = (relative: string, content: string | Buffer | object) => {
    const target = path.join(home, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const data = typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content, null, 2);
    fs.writeFileSync(target, data);
    return target;
  };
  write('app/appsettings.json', appSettings);
  for (const [relative, content] of Object.entries(files)) write(relative, content);
  return { home, appDir, write, remove: () => fs.rmSync(top, { recursive: true, force: true }) };
}

export interface TestHost {
  host: AckHost;
  url: string;
  home: TestHome;
  close(): Promise<void>;
}

/**
 * Starts a host on 127.0.0.1 and a free port over `home`. `env` defaults to `{ ACK_HOME: home }`-free process env.
 * `tlsPort` (e.g. 0) is passed on for tests of the HTTPS listener.
 */
export async function startTestHost(
  home: TestHome,
  modules: ModuleRegistry = {},
  env: NodeJS.ProcessEnv = {},
  listen: { tlsPort?: number } = {},
): Promise<TestHost> {
  // Tests hand in the implementations a home may name, as `ack serve` does with its built-ins.
  const host = await createHost({
    appDir: home.appDir,
    builtInModules: modules,
    env: { ...env },
    logging: { quiet: true },
  });
  const url = await host.listen({ port: 0, host: '127.0.0.1', ...listen });
  return { host, url, home, close: () => host.close({ graceMs: 1000 }) };
}

/** Minimal appsettings for tests: only the named modules, no file log sink. */
export function testAppSettings(
  overrides: { AppSettings?: Record<string, unknown>; [section: string]: unknown } = {},
): object {
  const { AppSettings, ...rest } = overrides;
  return {
    AppSettings: { LoadModules: [], ...AppSettings },
    Serilog: { WriteTo: [] },
    ...rest,
  };
}

export { probeModule } from './probe-module.js';
export { rawConnection, type RawConnection } from './raw-socket.js';
export { multipartBody, rawPost, type FormPart, type RawAnswer } from './multipart.js';
export { chromiumPath, launchChromium } from './browser.js';

/** A module folder with a module.json for each id, under the default `../modules`. */
export function moduleFiles(ids: string[], moduleJson: object = { Version: '1.0.0' }): Record<string, object> {
  return Object.fromEntries(ids.map((id) => [`modules/${id}/module.json`, { ModuleID: id, ...moduleJson }]));
}

/**
 * The usual test lifecycle in one call: homes and hosts made through it are closed and removed
 * after each test (vitest `afterEach`), however many a test starts.
 */
export function useTestHosts() {
  const homes: TestHome[] = [];
  const hosts: TestHost[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
    for (const h of homes.splice(0)) h.remove();
  });
  return {
    home(appSettings?: object, files?: Record<string, string | Buffer | object>): TestHome {
      const home = createTestHome(appSettings, files);
      homes.push(home);
      return home;
    },
    async start(
      home: TestHome,
      modules: ModuleRegistry = {},
      env: NodeJS.ProcessEnv = {},
      listen: { tlsPort?: number } = {},
    ): Promise<TestHost> {
      const host = await startTestHost(home, modules, env, listen);
      hosts.push(host);
      return host;
    },
  };
}
export * from './protocols.js';

export { mountTinyFilesystem } from './tiny-fs.js';

export { waitFor, type WaitForOptions } from './wait-for.js';
export { fuzzOptions, type FuzzOptions } from './fuzz.js';
export { testDatabases, type DatabaseAddress } from './databases.js';
export { TcpRelay } from './tcp-relay.js';
export { holdFileSystem } from './hold-file-system.js';
export { freePort, type FreePortOptions } from './free-port.js';
export { startRedisServer } from './redis-server.js';
export { problemRowKey, problemRowName, problemTableFaults } from './problem-table.js';
