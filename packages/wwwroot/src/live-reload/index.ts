import fs from 'node:fs';
import path from 'node:path';
import type { ModuleUpgrade, WebSocket } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import type { SharedFileCatalog } from '../shared-files/catalog.js';
import { createServedPathMap, sharedFileFolders } from './served-paths.js';

/** Where the live-reload socket is offered; the manifest names it in `Ack-Live-Reload`. */
export const LIVE_RELOAD_PATH = '/wwwroot/api/live-reload';

/** Editors and copies write a file in several steps: announce once the burst is over. */
const DEBOUNCE_MS = 100;

export interface LiveReload {
  upgrade: ModuleUpgrade;
  close(): void;
}

/**
 * Live reload (docs/live-reload.md): every change to a served file is announced to the sockets at
 * `LIVE_RELOAD_PATH` as `{"type":"changed","paths":[...]}`, with the URL paths that serve it. Two
 * sources: the host's contract changes (sync upload and refresh, contract sync, from any worker),
 * and edits on disk under the contract screens, the static root and the shared-file targets. The
 * disk watchers run only while a socket is open, so a host nobody watches pays nothing.
 */
export function createLiveReload(runtime: WwwrootRuntime, catalog: SharedFileCatalog | undefined): LiveReload {
  const { ctx, settings } = runtime;
  const logger = ctx.logger.child('live-reload');
  const contractRoot = path.join(settings.contractBasePath, ctx.settings.AppSettings.ApplicationID);
  const folders = [
    { root: contractRoot, prefix: `/${settings.contractRequestPath}/` },
    { root: settings.wwwrootBasePath, prefix: '/' },
  ];
  const shared = catalog?.items ?? [];
  const servedPaths = createServedPathMap(folders, shared);
  const clients = new Set<WebSocket>();
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    timer = undefined;
    const message = JSON.stringify({ type: 'changed', paths: [...pending] });
    pending.clear();
    for (const client of clients) if (client.readyState === client.OPEN) client.send(message);
  };
  const changed = (absolute: string) => {
    if (clients.size === 0) return;
    for (const url of servedPaths(absolute)) pending.add(url);
    if (pending.size > 0) timer ??= setTimeout(flush, DEBOUNCE_MS);
  };

  const stopContractChanges = ctx.host.contractChanges.subscribe((event) => event.files.forEach(changed));

  let watchers: fs.FSWatcher[] = [];
  const watch = (folder: string, recursive: boolean, accept: (name: string) => boolean) => {
    if (!fs.existsSync(folder)) return;
    try {
      const watcher = fs.watch(folder, { recursive, persistent: false }, (_event, name) => {
        if (name && accept(name.toString())) changed(path.join(folder, name.toString()));
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
    for (const folder of folders) watch(folder.root, true, () => true);
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
