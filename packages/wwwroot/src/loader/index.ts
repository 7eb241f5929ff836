import fs from 'node:fs';
import { createRequire } from 'node:module';
import express, { type Router } from 'express';
import type { WwwrootRuntime } from '../runtime.js';
import { fixedBody, send, type Resource } from '../serving/index.js';

/** Where every home finds the browser loader, with no copy in its static root (docs/loader.md). */
export const LOADER_MOUNT = '/wwwroot/api/loader';

/**
 * `GET /wwwroot/api/loader/ack.loader.js`: the `@ack/loader` script from the installed package, as
 * htmx is served from `htmx.org`. `no-cache`: a screen always revalidates, so it gets the current
 * loader after an upgrade (one 304 otherwise).
 */
export function createLoaderRouter(runtime: WwwrootRuntime): Router {
  const router = express.Router();
  let file: string | undefined;
  try {
    file = createRequire(import.meta.url).resolve('@ack/loader/ack.loader.js');
    if (!fs.existsSync(file)) throw new Error(`${file} does not exist`);
  } catch (err) {
    runtime.ctx.logger.warn(
      `the browser loader is not available at ${LOADER_MOUNT}/ack.loader.js (${(err as Error).message}); build @ack/loader`,
    );
    file = undefined;
  }
  if (file) {
    const script = file;
    // Read when first asked for, then kept, as htmx is.
    let asset: Resource | undefined;
    router.get('/ack.loader.js', (req, res) => {
      asset ??= fixedBody(fs.readFileSync(script), 'text/javascript; charset=utf-8', 'no-cache', {
        compress: runtime.settings.serving.compressFiles,
      });
      send(req, res, asset);
    });
  }
  return router;
}
