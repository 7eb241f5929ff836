import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { describeUnknownKeys, findUnknownKeys, JsonFileError, readJsonFile, type JsonFile } from '@ack/host/settings';

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
  { ok: true; catalog: SharedFileCatalog; notes: string[]; refused: RefusedItem[] } | { ok: false; reason: string };

/** A catalog item that would publish a secret; the host refuses to start with it. */
export interface RefusedItem {
  /** `file:line:column: items[n]`. */
  where: string;
  requestPath: string;
  hostFilePath: string;
  reason: string;
}

/** The keys a catalog may hold; any other is a typo the host points out (exact case, as it reads them). */
const CatalogKeys = z.looseObject({
  items: z.array(z.looseObject({ requestPath: z.unknown(), hostFilePath: z.unknown() })),
});

/**
 * Why a host file must never be published through the catalog, or undefined when it may be: the
 * host's and modules' settings, the catalog itself, keys and certificates, the host's private
 * `.ack/` folder (the signing key) and dotfiles (`.env`, `.git/...`; `.well-known/` is public by
 * design). See docs/static-files.md.
 *
 * Folders are judged from `base` (the entry base path) down: the folders the home itself lives in
 * are the operator's choice, so a home under `~/.local/share` or a checkout's `.work/` still
 * publishes its shared files. A target outside `base` is judged from the nearest folder it shares
 * with `base`.
 */
export function secretTargetReason(
  hostFilePath: string,
  catalogFile?: string,
  base = path.parse(path.resolve(hostFilePath)).root,
): string | undefined {
  const normal = path.resolve(hostFilePath);
  const below = path.relative(path.resolve(base), normal);
  const segments = (path.isAbsolute(below) ? normal : below)
    .split(/[\\/]+/)
    .filter((seg) => seg !== '' && seg !== '..');
  const name = (segments[segments.length - 1] ?? '').toLowerCase();
  if (catalogFile && normal === path.resolve(catalogFile)) return 'it is the catalog itself';
  if (/^appsettings.*\.json$/.test(name)) return "it is the host's settings file";
  if (name === 'module.json') return "it is a module's settings file";
  if (segments.some((seg) => seg.toLowerCase() === '.ack'))
    return "it is in the host's private .ack folder (signing key)";
  if (/\.(key|pem|pfx|p12|jks|keystore)$/.test(name)) return 'it is a key or certificate file';
  if (segments.some((seg) => seg.startsWith('.') && seg.toLowerCase() !== '.well-known'))
    return 'it is a dotfile or inside a dot folder';
  return undefined;
}

/** Where the manifest answers; a catalog item cannot take this path. */
export const MANIFEST_PATH = '/shared-files/manifest';

/**
 * @param resolve resolves a configured path from the entry base path, expanding environment
 *   variables (`ctx.paths.resolve`) — never from the catalog's own folder (docs/static-files.md).
 */
export function loadCatalog(file: string, resolve: (configured: string) => string): CatalogResult {
  if (!fs.existsSync(file)) return { ok: false, reason: `${file} does not exist` };
  // Read as appsettings.json is: comments, trailing commas, errors with line and column.
  let json: JsonFile;
  try {
    json = readJsonFile(file);
  } catch (err) {
    if (err instanceof JsonFileError) return { ok: false, reason: err.message };
    throw err;
  }
  const parsed = json.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, reason: `${file}: the top level must be an object with an "items" array` };
  }
  const items = (parsed as { items?: unknown }).items;
  if (!Array.isArray(items)) return { ok: false, reason: `${file}${where(json, ['items'])}: "items" must be an array` };
  const built = buildCatalog(items, resolve, file);
  const unknown = describeUnknownKeys(file, json, findUnknownKeys(parsed, CatalogKeys, { ignoreCase: false }), '.');
  const located = (note: string) =>
    note.replace(
      /^(.*?): items\[(\d+)\]/,
      (all, f: string, i: string) => `${f}${where(json, ['items', Number(i)])}: items[${i}]`,
    );
  return {
    ok: true,
    catalog: built.catalog,
    notes: [...unknown, ...built.notes.map(located)],
    refused: built.refused.map((r) => ({ ...r, where: located(r.where) })),
  };
}

function where(json: JsonFile, at: (string | number)[]): string {
  const position = json.locate(at);
  return position ? `:${position}` : '';
}

/** Applies the catalog rules (docs/static-files.md "Shared files") to the raw items: empty fields skipped, the first duplicate wins. */
export function buildCatalog(
  rawItems: readonly unknown[],
  resolve: (configured: string) => string,
  file = 'catalog',
): { catalog: SharedFileCatalog; notes: string[]; refused: RefusedItem[] } {
  const notes: string[] = [];
  const refused: RefusedItem[] = [];
  const catalog: SharedFileCatalog = { items: [], byPath: new Map() };
  rawItems.forEach((raw, index) => {
    const where = `${file}: items[${index}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      notes.push(`${where} is not an object; skipped`);
      return;
    }
    const { requestPath, hostFilePath } = raw as { requestPath?: unknown; hostFilePath?: unknown };
    for (const [field, value] of [
      ['requestPath', requestPath],
      ['hostFilePath', hostFilePath],
    ] as const) {
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
    // The form requests are compared in: lower case, empty segments kept (the original compares
    // the path exactly: `/s/a//b.txt` is not `/s/a/b.txt`).
    const key = request.toLowerCase();
    if (key === MANIFEST_PATH) {
      notes.push(`${where}.requestPath ${request} is the manifest's own path; skipped`);
      return;
    }
    if (catalog.byPath.has(key)) {
      notes.push(`${where}.requestPath ${request} repeats an earlier item; the first one wins`);
      return;
    }
    const absolute = resolve(host);
    const secret = secretTargetReason(absolute, file, resolve('.'));
    if (secret) {
      refused.push({ where, requestPath: request, hostFilePath: absolute, reason: secret });
      return;
    }
    catalog.byPath.set(key, absolute);
    catalog.items.push({ requestPath: request, hostFilePath: absolute });
  });
  return { catalog, notes, refused };
}
