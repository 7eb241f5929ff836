import fs from 'node:fs';
import path from 'node:path';
import type { ModuleUpgrade, WebSocket } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import type { SharedFileCatalog } from '../shared-files/catalog.js';
import { createServedPathMap, sharedFileFolders } from './served-paths.js';
import { isUnderReleasePrefix } from '../releases/layout.js';

/** Where the live-reload socket is offered; the manifest names it in `Ack-Live-Reload`. */
export const LIVE_RELOAD_PATH = '/wwwroot/api/live-reload';

/** Editors and copies write a file in several steps: announce a change seen on disk once the burst is over. */
const DEBOUNCE_MS = 100;
/**
 * A contract change (one atomic write) is announced at once; the disk watcher's own event of that
 * same write, which arrives a moment later, is not announced again within this time.
 */
const ECHO_MS = 250;

export interface LiveReload {
  upgrade: ModuleUpgrade;
  close(): void;
}

/**
 * Live reload (docs/live-reload.md): every change to a served file is announced to the sockets at
 * `LIVE_RELOAD_PATH` as `{"type":"changed","paths":[...]}`, with the URL paths that serve it. Two
 * sources: the host's contract changes (sync upload and refresh, contract sync, from any worker),
 * announced at once, and edits on disk under the contract screens, the static root and the
 * shared-file targets, gathered for `DEBOUNCE_MS` (docs/live-reload.md). The
 * disk watchers run only while a socket is open, so a host nobody watches pays nothing.
 */
export function createLiveReload(runtime: WwwrootRuntime, catalog: SharedFileCatalog | undefined): LiveReload {
  const { ctx, settings } = runtime;
  const logger = ctx.logger.child('live-reload');
  const contractRoot = path.join(settings.contractBasePath, settings.host.applicationId);
  const folders = [
    { root: contractRoot, prefix: `/${settings.contractRequestPath}/` },
    { root: settings.wwwrootBasePath, prefix: '/' },
  ];
  const shared = catalog?.items ?? [];
  const servedPaths = createServedPathMap(folders, shared);
  const clients = new Set<WebSocket>();
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  // URL path → when a contract change announced it (the watcher's echo of that write is dropped).
  const announced = new Map<string, number>();

  const send = (paths: readonly string[]) => {
    const message = JSON.stringify({ type: 'changed', paths });
    for (const client of clients) if (client.readyState === client.OPEN) client.send(message);
  };
  const flush = () => {
    timer = undefined;
    const paths = [...pending];
    pending.clear();
    if (paths.length > 0) send(paths);
  };
  const seenOnDisk = (absolute: string) => {
    if (clients.size === 0) return;
    const now = Date.now();
    for (const url of servedPaths(absolute)) {
      const at = announced.get(url);
      if (at !== undefined && now - at < ECHO_MS) continue;
      pending.add(url);
    }
    if (pending.size > 0) timer ??= setTimeout(flush, DEBOUNCE_MS);
  };
  const contractChanged = (files: readonly string[]) => {
    if (clients.size === 0) return;
    const now = Date.now();
    for (const [url, at] of announced) if (now - at >= ECHO_MS) announced.delete(url);
    const paths = [...new Set(files.flatMap((file) => servedPaths(file)))];
    for (const url of paths) {
      announced.set(url, now);
      // The watcher may have seen the write before the change was published: this message covers it.
      pending.delete(url);
    }
    if (paths.length > 0) send(paths);
  };

  const stopContractChanges = ctx.host.contractChanges.subscribe((event) => contractChanged(event.files));

  let watchers: fs.FSWatcher[] = [];
  const watch = (folder: string, recursive: boolean, accept: (name: string) => boolean) => {
    if (!fs.existsSync(folder)) return;
    try {
      const watcher = fs.watch(folder, { recursive, persistent: false }, (_event, name) => {
        if (name && accept(name.toString())) seenOnDisk(path.join(folder, name.toString()));
      });
      // A watched folder removed or unreadable: stop watching it; sync events still arrive.
      watcher.on('error', (err) => {
        logger.debug(`stopped watching ${folder}: ${err.message}`);
        watcher.close();
      });
      watchers.push(watcher);
    } catch (err) {
      logger.warn(`cannot watch ${folder} for live reload: ${(err as Error).message}`);
    }
  };
  const startWatching = () => {
    // Under a release prefix the switch is the one announcement (docs/releases.md "Refresh and live
    // reload"): staging's hard links touch the live files' link counts, which the watcher would
    // take for edits.
    const plain = (root: string) => (name: string) =>
      !settings.releasesEnabled || !isUnderReleasePrefix(settings.contractBasePath, path.join(root, name));
    for (const folder of folders) watch(folder.root, true, plain(folder.root));
    for (const [folder, names] of sharedFileFolders(shared)) watch(folder, false, (name) => names.has(name));
  };
  const stopWatching = () => {
    for (const watcher of watchers) watcher.close();
    watchers = [];
  };

  logger.info(`live reload on: ${LIVE_RELOAD_PATH}`);
  return {
    upgrade: {
      path: LIVE_RELOAD_PATH,
      handler(socket) {
        if (clients.size === 0) startWatching();
        clients.add(socket);
        socket.once('close', () => {
          clients.delete(socket);
          if (clients.size === 0) stopWatching();
        });
        // The socket only announces; anything a client sends is ignored.
      },
    },
    close() {
      stopContractChanges();
      stopWatching();
      if (timer) clearTimeout(timer);
    },
  };
}
