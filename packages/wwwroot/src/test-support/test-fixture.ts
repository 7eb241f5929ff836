import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AckModuleFactory, Logger, UploadFlow } from '@ack/host';
import { createTestHome, startTestHost, testAppSettings, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

/**
 * Test support shared by wwwroot's folders (static root, serving, shared files, settings, sync): a
 * temp home with the wwwroot module (its module.json under `modules/wwwroot/`), served by a real
 * host on a free loopback port, and the module's log lines captured (to check warnings); raw
 * requests; and the sync clients' requests. The file keeps the `test-fixture` name so that the
 * package's `files` leave it out of the published tarball (docs/releasing.md).
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

/** `Authorization` header value as sync clients send it: `Basic base64("<token>:")`. */
/**
 * The wwwroot module, its upload flows kept: `inFlight()` counts their uploads that have not ended,
 * so that a test sees a request that would wait for ever (docs/sync.md "Interrupted writes").
 */
export function countingWwwroot(): { wwwroot: AckModuleFactory; inFlight(): number } {
  const flows: UploadFlow[] = [];
  const wwwroot: AckModuleFactory = (ctx) =>
    wwwrootModule({
      ...ctx,
      host: {
        ...ctx.host,
        createUploadFlow: (options) => {
          const flow = ctx.host.createUploadFlow(options);
          flows.push(flow);
          return flow;
        },
      },
    });
  return { wwwroot, inFlight: () => flows.reduce((n, flow) => n + flow.uploadsInFlight, 0) };
}

export const basicAuth = (token: string) => `Basic ${Buffer.from(`${token}:`).toString('base64')}`;

/** `POST /wwwroot/api/sync/upload` with the three fields and a file, as forbes sends it. */
export function syncUpload(
  url: string,
  token: string,
  fields: { moduleName: string; changeType: string; filePath: string },
  content: string,
): Promise<Response> {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  data.append('file', new Blob([content]), 'upload.bin');
  return fetch(`${url}/wwwroot/api/sync/upload`, {
    method: 'POST',
    body: data,
    headers: { Authorization: basicAuth(token) },
  });
}
