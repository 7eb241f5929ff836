import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AckModuleFactory, Logger } from '@ack/host';
import { createTestHome, startTestHost, testAppSettings, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

/**
 * Test support for the static root, contract screens and shared files: a temp home with the
 * wwwroot module (its module.json under `modules/wwwroot/`), served by a real host on a free
 * loopback port, and the module's log lines captured (to check warnings).
 */
export interface WwwrootFixtureOptions {
  appSettings?: Record<string, unknown>;
  moduleConfig?: Record<string, unknown>;
  /** Files under the home (`app/` is the entry base path). */
  files?: Record<string, string | Buffer | object>;
  /** Environment of the host (for `%NAME%` in paths). */
  env?: NodeJS.ProcessEnv;
  /** More modules, loaded after wwwroot when named in `appSettings.LoadModules`. */
  modules?: Record<string, AckModuleFactory>;
  /** A folder name the home is made inside (for example a dot folder). */
  homeUnder?: string;
}

export interface WwwrootFixture extends TestHost {
  /** Log lines the module wrote: `level: message`. */
  logs: string[];
  close(): Promise<void>;
}

export async function startWwwroot(options: WwwrootFixtureOptions = {}): Promise<WwwrootFixture> {
  const home = createTestHome(
    testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], ...options.appSettings } }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        Name: 'wwwroot',
        Version: '1.0.0',
        ModuleConfig: { ...options.moduleConfig },
      },
      ...Object.fromEntries(
        Object.keys(options.modules ?? {}).map((id) => [`modules/${id}/module.json`, { ModuleID: id }]),
      ),
      ...options.files,
    },
    options.homeUnder === undefined ? {} : { under: options.homeUnder },
  );
  // The default static root exists, as in a real home (its absence is warned about at start).
  fs.mkdirSync(path.join(home.home, 'modules', 'wwwroot', 'wwwroot'), { recursive: true });
  const logs: string[] = [];
  const capture = (logger: Logger): Logger => ({
    debug: (m, meta) => {
      logs.push(`debug: ${m}`);
      logger.debug(m, meta);
    },
    info: (m, meta) => {
      logs.push(`info: ${m}`);
      logger.info(m, meta);
    },
    warn: (m, meta) => {
      logs.push(`warn: ${m}`);
      logger.warn(m, meta);
    },
    error: (m, meta) => {
      logs.push(`error: ${m}`);
      logger.error(m, meta);
    },
    child: (label) => capture(logger.child(label)),
  });
  const wwwroot: AckModuleFactory = (ctx) => wwwrootModule({ ...ctx, logger: capture(ctx.logger) });
  const host = await startTestHost(home, { wwwroot, ...options.modules }, options.env);
  return {
    ...host,
    logs,
    close: async () => {
      await host.close();
      home.remove();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/**
 * A request whose path is sent byte for byte as given (fetch would normalise `..`, backslashes
 * and some encodings before they reach the server).
 */
export function rawRequest(
  baseUrl: string,
  rawPath: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'GET',
        path: rawPath,
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
