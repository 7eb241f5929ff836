import fs from 'node:fs';
import path from 'node:path';
import { SettingsError, type RawHandler } from '@ack/host';
import { foldExactly } from '@ack/host/serving';
import type { WwwrootRuntime } from '../runtime.js';
import { fixedBody, send, type FileStore } from '../serving/index.js';
import { loadCatalog, MANIFEST_PATH, type SharedFileCatalog } from './catalog.js';

export { loadCatalog, buildCatalog, MANIFEST_PATH } from './catalog.js';
export type { SharedFileCatalog, SharedFileItem } from './catalog.js';

/**
 * Shared-file catalog and manifest (docs/static-files.md "Shared files"): handlers of the public phase, so they run
 * before session and sign-in and never set a cookie. The catalog is read once at start; a missing
 * or invalid one logs a warning and leaves the feature off (the manifest answers `[]`), the host up. Target files are looked
 * up per request (one stat), so new content shows at once and a missing target passes the request
 * on (to the static root, then 404).
 */
export function createSharedFileHandlers(
  runtime: WwwrootRuntime,
  store: FileStore,
  manifestHeaders: Record<string, string> = {},
): { handlers: RawHandler[]; catalog?: SharedFileCatalog } {
  const { settings, ctx } = runtime;
  const file = settings.sharedFileConfigPath;
  // With the feature off the manifest still answers, empty: the loader asks for it on every screen
  // start and an empty list is the truth (docs/static-files.md).
  const off = () => ({
    handlers: [createSharedFileHandler(runtime, { items: [], byPath: new Map() }, store, manifestHeaders)],
  });
  if (!file) {
    ctx.logger.info('shared files: off (SharedFileConfigPath is empty)');
    return off();
  }
  const loaded = loadCatalog(file, ctx.paths.resolve);
  if (!loaded.ok) {
    ctx.logger.warn(`shared files: off: ${loaded.reason}`);
    return off();
  }
  // A catalog entry that would publish a secret stops start-up: serving without it could hide the
  // mistake, and serving with it would leak the file.
  if (loaded.refused.length > 0) {
    throw new SettingsError(
      loaded.refused
        .map(
          (r) =>
            `${r.where}: refused to publish ${r.requestPath} -> ${r.hostFilePath}: ${r.reason}, which must never be public; remove the entry`,
        )
        .join('\n'),
    );
  }
  for (const note of loaded.notes) ctx.logger.warn(`shared files: ${note}`);
  const { catalog } = loaded;
  for (const item of catalog.items) {
    if (!fs.existsSync(item.hostFilePath))
      ctx.logger.warn(
        `shared files: ${item.requestPath}: ${item.hostFilePath} does not exist (requests pass on until it does)`,
      );
  }
  ctx.logger.info(`shared files: ${catalog.items.length} item(s) from ${file}`);
  return { handlers: [createSharedFileHandler(runtime, catalog, store, manifestHeaders)], catalog };
}

/** `manifestHeaders` go on every manifest answer (e.g. `Ack-Live-Reload`, which tells the loader where the live-reload socket is). */
export function createSharedFileHandler(
  runtime: WwwrootRuntime,
  catalog: SharedFileCatalog,
  store: FileStore,
  manifestHeaders: Record<string, string> = {},
): RawHandler {
  // A shared file is served from its own folder: a sidecar beside it must stay inside that folder.
  const folderOf = new Map(catalog.items.map((item) => [item.hostFilePath, path.dirname(item.hostFilePath)]));
  const manifest = fixedBody(
    Buffer.from(JSON.stringify(catalog.items.map((item) => ({ requestPath: item.requestPath })))),
    'application/json; charset=utf-8',
    'no-cache',
    { extraHeaders: manifestHeaders, compress: runtime.settings.serving.compressFiles },
  );

  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // Compared decoded (once, at the edge) and case-insensitively, without the query string, empty
    // segments included; a
    // decoded `/` inside a segment stays `%2f`, so no catalog path is reached by an encoded `/`.
    // A trailing `/` names a folder, never a catalog file.
    if (req.ack.path.trailingSlash) return next();
    // Compared exactly, as the original does: `/s/a/b.txt` is not the item `/s/a//b.txt`.
    const key = req.ack.path.emptySegments ? foldExactly(req.ack.rawPath) : req.ack.path.folded;
    if (key === MANIFEST_PATH) return send(req, res, manifest);
    const target = catalog.byPath.get(key);
    if (target === undefined) return next();
    const facts = store.lookup(target, folderOf.get(target)!);
    if (!facts) return next();
    send(req, res, facts);
  };
}
