import fs from 'node:fs';

/**
 * The shared-file catalog (docs/wire-formats.md): `{ "items": [{ "requestPath", "hostFilePath" }] }`, read once
 * at start. Pure apart from reading the file: the caller decides what to log.
 */
export interface SharedFileItem {
  /** As written in the catalog (starts with `/`). */
  requestPath: string;
  /** Absolute path of the host file (relative paths resolved from the entry base path). */
  hostFilePath: string;
}

export interface SharedFileCatalog {
  /** Loaded items in catalog order (no empty or duplicate ones). */
  items: SharedFileItem[];
  /** Lower-cased request path → host file: O(1) whatever the catalog size. */
  byPath: Map<string, string>;
}

export type CatalogResult =
  | { ok: true; catalog: SharedFileCatalog; notes: string[] }
  | { ok: false; reason: string };

/** Where the manifest answers; a catalog item cannot take this path. */
export const MANIFEST_PATH = '/shared-files/manifest';

/**
 * @param resolve resolves a configured path from the entry base path, expanding environment
 *   variables (`ctx.paths.resolve`) — never from the catalog's own folder (docs/static-files.md).
 */
export function loadCatalog(file: string, resolve: (configured: string) => string): CatalogResult {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? `${file} does not exist` : `${file} cannot be read (${code ?? String(err)})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    return { ok: false, reason: `${file} is not valid JSON (${(err as Error).message})` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, reason: `${file}: the top level must be an object with an "items" array` };
  }
  const items = (parsed as { items?: unknown }).items;
  if (!Array.isArray(items)) return { ok: false, reason: `${file}: "items" must be an array` };
  return { ok: true, ...buildCatalog(items, resolve, file) };
}

/** Applies the catalog rules (docs/static-files.md "Shared files") to the raw items: empty fields skipped, the first duplicate wins. */
export function buildCatalog(
  rawItems: readonly unknown[],
  resolve: (configured: string) => string,
  file = 'catalog',
): { catalog: SharedFileCatalog; notes: string[] } {
  const notes: string[] = [];
  const catalog: SharedFileCatalog = { items: [], byPath: new Map() };
  rawItems.forEach((raw, index) => {
    const where = `${file}: items[${index}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      notes.push(`${where} is not an object; skipped`);
      return;
    }
    const { requestPath, hostFilePath } = raw as { requestPath?: unknown; hostFilePath?: unknown };
    for (const [field, value] of [['requestPath', requestPath], ['hostFilePath', hostFilePath]] as const) {
      if (value !== undefined && value !== null && typeof value !== 'string') {
        notes.push(`${where}.${field} must be a string; skipped`);
        return;
      }
    }
    if (typeof requestPath !== 'string' || typeof hostFilePath !== 'string') {
      notes.push(`${where} has an empty requestPath or hostFilePath; skipped`);
      return;
    }
    const request = requestPath.trim();
    const host = hostFilePath.trim();
    if (request === '' || host === '') {
      notes.push(`${where} has an empty requestPath or hostFilePath; skipped`);
      return;
    }
    if (!request.startsWith('/')) {
      notes.push(`${where}.requestPath "${request}" must start with /; skipped`);
      return;
    }
    if (request.includes('?') || request.includes('#')) {
      notes.push(`${where}.requestPath "${request}" has a query string or fragment, which is never compared; skipped`);
      return;
    }
    // The form requests are compared in (`req.ack.path.folded`): lower case, no empty segments.
    const key = '/' + request.split('/').filter(Boolean).join('/').toLowerCase();
    if (key === MANIFEST_PATH) {
      notes.push(`${where}.requestPath ${request} is the manifest's own path; skipped`);
      return;
    }
    if (catalog.byPath.has(key)) {
      notes.push(`${where}.requestPath ${request} repeats an earlier item; the first one wins`);
      return;
    }
    const absolute = resolve(host);
    catalog.byPath.set(key, absolute);
    catalog.items.push({ requestPath: request, hostFilePath: absolute });
  });
  return { catalog, notes };
}
