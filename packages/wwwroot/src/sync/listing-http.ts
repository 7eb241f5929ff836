import path from 'node:path';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { resolveContainedPath } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { batchOffer } from './batch.js';
import type { DigestCache } from './digest-cache.js';
import { streamListing } from './listing.js';
import { contractFolderOf } from './module-folders.js';
import { stagedFolderOf } from '../releases/stage-target.js';
import { parseModuleName, queryOf, resolveInFolder } from './targets.js';

// The thin HTTP adapter of the sync listing; the walk and the stream are `listing.ts`.

/**
 * `GET /wwwroot/api/sync/list?moduleName=&prefix=` (docs/wire-formats.md "Sync listing"): every file
 * under `prefix` in the module's contract folder, with size and SHA-256, as NDJSON. A bad module or
 * a prefix that leaves the folder is a 400 problem, as for an upload.
 */
export function createListHandler(runtime: WwwrootRuntime, cache: DigestCache): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const query = queryOf(req);
      const module = parseModuleName(query.get('modulename'));
      // `?release=<id>&path=<prefix>`: the staged release's files, relative to the prefix.
      const folder = (await stagedFolderOf(runtime, module, query)) ?? (await contractFolderOf(runtime, module));
      const prefix = query.get('prefix') ?? '';
      const lexical = resolveContainedPath(folder, prefix);
      // No prefix (or only `/` and `.`) is the whole folder; anything else resolves like a target.
      const start =
        !lexical.ok && lexical.reason === 'empty' ? folder : (await resolveInFolder(folder, prefix)).absolute;
      await streamListing(res, folder, start, cache, {
        module,
        prefix: path.relative(folder, start).split(path.sep).join('/'),
        batch: batchOffer(runtime),
      });
    } catch (err) {
      if (res.headersSent) return void res.destroy(); // mid-listing: cut short, the client sees no closing line
      next(err);
    }
  };
}
