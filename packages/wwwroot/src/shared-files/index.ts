import crypto from 'node:crypto';
import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { AckRequest, Next, RawHandler } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { engineFor, notModified, sendFile } from '../static/engine/index.js';
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
export function createSharedFileHandlers(runtime: WwwrootRuntime, manifestHeaders: Record<string, string> = {}): { handlers: RawHandler[]; catalog?: SharedFileCatalog } {
  const { settings, ctx } = runtime;
  const file = settings.sharedFileConfigPath;
  // With the feature off the manifest still answers, empty: the loader asks for it on every screen
  // start and an empty list is the truth (docs/static-files.md).
  const off = () => ({ handlers: [createSharedFileHandler(runtime, { items: [], byPath: new Map() }, manifestHeaders)] });
  if (!file) {
    ctx.logger.info('shared files: off (SharedFileConfigPath is empty)');
    return off();
  }
  const loaded = loadCatalog(file, ctx.paths.resolve);
  if (!loaded.ok) {
    ctx.logger.warn(`shared files: off: ${loaded.reason}`);
    return off();
  }
  for (const note of loaded.notes) ctx.logger.warn(`shared files: ${note}`);
  const { catalog } = loaded;
  for (const item of catalog.items) {
    if (!fs.existsSync(item.hostFilePath)) ctx.logger.warn(`shared files: ${item.requestPath}: ${item.hostFilePath} does not exist (requests pass on until it does)`);
  }
  ctx.logger.info(`shared files: ${catalog.items.length} item(s) from ${file}`);
  return { handlers: [createSharedFileHandler(runtime, catalog, manifestHeaders)], catalog };
}

/** `manifestHeaders` go on every manifest answer (e.g. `Ack-Live-Reload`, which tells the loader where the live-reload socket is). */
export function createSharedFileHandler(runtime: WwwrootRuntime, catalog: SharedFileCatalog, manifestHeaders: Record<string, string> = {}): RawHandler {
  const { store } = engineFor(runtime);
  const manifest = Buffer.from(JSON.stringify(catalog.items.map((item) => ({ requestPath: item.requestPath }))));
  const manifestEtag = `"${crypto.createHash('sha256').update(manifest).digest('base64url').slice(0, 27)}"`;

  const sendManifest = (req: AckRequest, res: ServerResponse) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', manifestEtag);
    for (const name in manifestHeaders) res.setHeader(name, manifestHeaders[name]!);
    if (notModified(req.headers['if-none-match'], undefined, manifestEtag, '')) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', manifest.length);
    res.end(req.method === 'HEAD' ? undefined : manifest);
  };

  return (req: AckRequest, res: ServerResponse, next: Next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const raw = req.ack.rawPath;
    // Compared decoded and case-insensitively, without the query string (already split off by the
    // edge). `decodeURI` keeps `%2F` encoded, so no catalog path can be reached by an encoded `/`.
    const key = (raw.includes('%') ? decodeURI(raw) : raw).toLowerCase();
    if (key === MANIFEST_PATH) return sendManifest(req, res);
    const target = catalog.byPath.get(key);
    if (target === undefined) return next();
    const facts = store.lookup(target);
    if (!facts) return next();
    sendFile(req, res, facts);
  };
}
