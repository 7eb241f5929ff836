import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost, type AckHost, type AckModuleFactory } from '@ack/host';
import {
  createTestHome,
  moduleFiles,
  startTestHost,
  testAppSettings,
  type TestHome,
  type TestHost,
} from '@ack/host/test-support';
// The wwwroot module through its sources, not as a package: @ack/wwwroot depends on @ack/loader (it
// serves the built loader), and a dependency back, even for tests, would make the workspace cyclic.
import { wwwrootModule } from '../../../wwwroot/src/index.js';
import { bundle, build } from '../../build.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const exampleHome = path.resolve(here, '../../../../examples/basic');

/**
 * The real example host (`examples/basic`, as `pnpm start` serves it) on a free loopback port.
 * Builds the loader first, so `/lib/ack.loader.js` is the bundle of the sources under test.
 * `env` overrides settings (`AppSettings__...`); `tlsPort` opens the HTTPS listener too.
 */
export async function startExampleHost(
  options: { env?: NodeJS.ProcessEnv; tlsPort?: number } = {},
): Promise<{ host: AckHost; url: string }> {
  await build();
  const host = await createHost({
    appDir: path.join(exampleHome, 'app'),
    modules: { wwwroot: wwwrootModule },
    env: { ...options.env },
    logging: { quiet: true },
  });
  const url = await host.listen({ port: 0, host: '127.0.0.1', tlsPort: options.tlsPort });
  return { host, url };
}

export interface CatalogItem {
  requestPath: string;
  hostFilePath: string;
}

/**
 * A throw-away home served by a real host with the wwwroot module: `shared` files under
 * `<home>/shared/`, a catalog of `items` (host paths resolve from `<home>/app`), `pages` under
 * the static root, and the freshly built loader at `/lib/ack.loader.js` and `/lib/ack.loader.mjs`.
 * `before` modules load before wwwroot (e.g. one that answers the manifest path itself).
 */
export async function startLoaderHome(options: {
  shared: Record<string, string>;
  items: CatalogItem[];
  pages: Record<string, string>;
  before?: Record<string, AckModuleFactory>;
}): Promise<TestHost & { home: TestHome; writePage(name: string, html: string): void }> {
  const { iife, esm } = await bundle();
  const before = options.before ?? {};
  const files: Record<string, string | object> = {
    ...moduleFiles(Object.keys(before)),
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { SharedFileConfigPath: '../config/shared_files.json' },
    },
    'config/shared_files.json': { items: options.items },
    'modules/wwwroot/wwwroot/lib/ack.loader.js': iife.code,
    'modules/wwwroot/wwwroot/lib/ack.loader.js.map': iife.map,
    'modules/wwwroot/wwwroot/lib/ack.loader.mjs': esm.code,
    'modules/wwwroot/wwwroot/lib/ack.loader.mjs.map': esm.map,
  };
  for (const [name, content] of Object.entries(options.shared)) files[`shared/${name}`] = content;
  for (const [name, content] of Object.entries(options.pages)) files[`modules/wwwroot/wwwroot/${name}`] = content;
  const home = createTestHome(
    testAppSettings({ AppSettings: { LoadModules: [...Object.keys(before), 'wwwroot'] } }),
    files,
  );
  const started = await startTestHost(home, { ...before, wwwroot: wwwrootModule });
  return {
    ...started,
    close: async () => {
      await started.close();
      home.remove();
    },
    writePage: (name, html) => void home.write(`modules/wwwroot/wwwroot/${name}`, html),
  };
}
