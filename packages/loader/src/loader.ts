import { kindOf, textAssetId, textAssetType } from './rules.js';
import { liveReload } from './live-reload.js';

/** Settings of one loader run. */
export interface LoaderOptions {
  /**
   * Where the host is, for hosts under a path prefix or on another origin, e.g. `/app` or
   * `https://host.example/app`. Default: this page's origin. A trailing `/` is ignored.
   */
  baseUrl?: string;
  /** Put before every text asset ID; `shared_` for screens written for the original loader. */
  idPrefix?: string;
  /** Milliseconds after which the manifest or a text file counts as failed. Default 10000. */
  timeout?: number;
}

/** One line of the loader log: a problem that did not stop start-up. */
export interface LoaderLogEntry {
  level: 'error' | 'warn';
  message: string;
  /** The URL concerned, when there is one. */
  url?: string;
}

/** A text asset added to `<head>` as `<script type="..." id="...">`. */
export interface TextAsset {
  id: string;
  type: string;
  url: string;
}

/** What one run joined, and what went wrong in it. */
export interface LoaderResult {
  /** Style URLs from the manifest, in manifest order. */
  styles: string[];
  /** Script URLs from the manifest, in manifest order. */
  scripts: string[];
  /** Text assets added to `<head>`, in manifest order. */
  textAssets: TextAsset[];
  /** Log entries of this run (they are also in `log`). */
  log: LoaderLogEntry[];
}

/** The DOM event that announces the end of a standalone run (`detail` is the `LoaderResult`). */
export const LOADED_EVENT = 'ack:shared-files-loaded';

/** The loader log of this page: every problem of every run, oldest first. */
export const log: LoaderLogEntry[] = [];

let announceReady: (result: LoaderResult) => void;
/** Resolves with the result of the first standalone run (`start`, or the autoload attribute). Never rejects. */
export const ready = new Promise<LoaderResult>((resolve) => (announceReady = resolve));

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Writes a problem to the page's loader log, the run's log and the console. */
function note(result: LoaderResult, message: string, url?: string, level: LoaderLogEntry['level'] = 'error'): void {
  const entry: LoaderLogEntry = { level, message, url };
  result.log.push(entry);
  log.push(entry);
  console[level]('[ack loader] ' + message + (url ? ' (' + url + ')' : ''));
}

/** GET; non-2xx is an error. `no-cache` revalidates, so a changed file shows at once. */
async function fetchOk(url: string, timeout: number): Promise<Response> {
  const response = await fetch(url, {
    cache: 'no-cache',
    signal: AbortSignal.timeout ? AbortSignal.timeout(timeout) : null,
  });
  if (!response.ok) throw new Error('HTTP ' + response.status);
  return response;
}

const fetchText = async (url: string, timeout: number) => (await fetchOk(url, timeout)).text();

/**
 * Way (a), joined to an existing screen loader: reads the manifest, pushes its `.css` URLs onto
 * `styles` and its `.js` URLs onto `scripts` (manifest order), adds every other file to `<head>`
 * as an inert text asset, and resolves when the text assets are in. Loading the styles and
 * scripts stays the caller's job. Never rejects: problems go to the loader log.
 */
export async function joinSharedFiles(
  styles: string[],
  scripts: string[],
  options: LoaderOptions = {},
): Promise<LoaderResult> {
  const base = (options.baseUrl ?? '').replace(/\/+$/, '');
  const timeout = options.timeout ?? 10000;
  const result: LoaderResult = { styles: [], scripts: [], textAssets: [], log: [] };
  const problem = (message: string, url?: string, level?: LoaderLogEntry['level']) => note(result, message, url, level);

  const manifestUrl = base + '/shared-files/manifest';
  let entries: unknown;
  try {
    const response = await fetchOk(manifestUrl, timeout);
    // The host names its live-reload socket only in development (docs/live-reload.md).
    const socket = response.headers.get('ack-live-reload');
    if (socket) liveReload(base, socket);
    entries = JSON.parse(await response.text());
    if (!Array.isArray(entries)) throw new Error('not a JSON array');
  } catch (e) {
    problem('manifest not loaded: ' + reason(e), manifestUrl);
    return result;
  }

  const ids = new Set<string>();
  const pending: Array<Promise<(TextAsset & { text: string }) | undefined>> = [];
  for (const entry of entries as Array<{ requestPath?: unknown } | null>) {
    const path = entry?.requestPath;
    // A path must be local to the host: `//other.host/x.js` would load from another origin.
    if (typeof path !== 'string' || !/^\/(?![/\\])/.test(path)) {
      problem('manifest entry skipped: ' + JSON.stringify(entry), manifestUrl, 'warn');
      continue;
    }
    const url = base + path;
    const kind = kindOf(path);
    if (kind === 'style') {
      styles.push(url);
      result.styles.push(url);
    } else if (kind === 'script') {
      scripts.push(url);
      result.scripts.push(url);
    } else {
      const id = textAssetId(path, options.idPrefix);
      const type = textAssetType(path);
      if (!id) problem('text asset skipped: its file name gives no ID', url, 'warn');
      // Rule 3: one ID, one element; the first keeps it, the second is reported and left out.
      // (Against the page's own elements it is checked at insertion, once the page is parsed.)
      else if (ids.has(id)) problem('text asset skipped: duplicate ID "' + id + '"', url);
      else {
        ids.add(id);
        pending.push(
          (async () => {
            try {
              const text = await fetchText(url, timeout);
              if (type === 'application/json') JSON.parse(text);
              return { id, type, url, text };
            } catch (e) {
              problem('text asset "' + id + '" not loaded: ' + reason(e), url);
            }
          })(),
        );
      }
    }
  }

  // Inserted together once all are in, so they stand in manifest order; and only once the page is
  // parsed, or an element of the page further down would not be seen yet and would lose its ID.
  const assets = await Promise.all(pending);
  if (assets.length > 0) await pageParsed();
  for (const asset of assets) {
    if (!asset) continue;
    if (document.getElementById(asset.id)) {
      problem('text asset skipped: duplicate ID "' + asset.id + '"', asset.url);
      continue;
    }
    const element = document.createElement('script');
    element.type = asset.type; // not a JavaScript type: the browser keeps it as inert text
    element.id = asset.id;
    element.textContent = asset.text;
    element.setAttribute('data-ack-src', asset.url);
    document.head.appendChild(element);
    result.textAssets.push({ id: asset.id, type: asset.type, url: asset.url });
  }
  return result;
}

/** Resolves once the page's own HTML is parsed (at once when it already is). */
async function pageParsed(): Promise<void> {
  if (document.readyState === 'loading')
    await new Promise((parsed) => document.addEventListener('DOMContentLoaded', parsed, { once: true }));
}

/** Resolves when the element has loaded or failed (a failure goes to the log). */
function inserted(element: HTMLLinkElement | HTMLScriptElement, url: string, result: LoaderResult): Promise<void> {
  return new Promise((done) => {
    element.onload = () => done();
    element.onerror = () => {
      note(result, 'not loaded', url);
      done();
    };
    document.head.appendChild(element);
  });
}

/**
 * Way (b), on its own: joins the shared files, then adds a `<link rel="stylesheet">` per style
 * and a `<script>` per script to `<head>` in manifest order (scripts run in that order), waits
 * for them and for the page to be parsed, then resolves `ready` and dispatches
 * `ack:shared-files-loaded` on `document`.
 */
export async function start(options: LoaderOptions = {}): Promise<LoaderResult> {
  const result = await joinSharedFiles([], [], options);
  // A style the page links itself (to paint styled from its first frame) is not linked twice.
  const linked = new Set(
    [...document.querySelectorAll<HTMLLinkElement>('link[rel~=stylesheet]')].map((link) => link.href),
  );
  const loads = result.styles.flatMap((href) => {
    if (linked.has(new URL(href, location.href).href)) return [];
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = href;
    return inserted(link, href, result);
  });
  for (const src of result.scripts) {
    const script = document.createElement('script');
    script.src = src;
    script.async = false; // dynamic scripts run in insertion order only when not async
    loads.push(inserted(script, src, result));
  }
  await Promise.all(loads);
  // Announce only once the page is parsed, so every script of the page has had its chance to
  // listen, even when the manifest failed at once.
  await pageParsed();
  announceReady(result);
  document.dispatchEvent(new CustomEvent(LOADED_EVENT, { detail: result }));
  return result;
}
