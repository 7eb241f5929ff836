import net from 'node:net';
import path from 'node:path';
import {
  createHostPaths,
  loadHostSettings,
  moduleJsonPath,
  readModuleJsonFile,
  sessionStoreAddress,
} from '@ack/host/settings';
import { parseWwwrootSettings } from '@ack/wwwroot';

/** One address `ack check --connect` tried (docs/configuration.md, `ack check`). */
export interface ConnectTarget {
  /** What it is: `session store MySql`, `BusinessServerUrl (wwwroot)`. */
  what: string;
  /** The setting that names it. */
  setting: string;
  /** `host:port` as tried, or the URL. */
  address: string;
  /** `ok`, `failed`, or `skipped` (this host's own port: it answers once the host runs). */
  result: 'ok' | 'failed' | 'skipped';
  detail?: string;
}

const CONNECT_TIMEOUT_MS = 5_000;

/** Opens a TCP connection to `host:port` and closes it: an error code, or undefined when it opened. */
function tryConnect(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => done(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

const isLocal = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');

/**
 * `ack check --connect`: the addresses a home's host would reach out to, each tried once with a
 * TCP connection (nothing is sent, nothing is created): the shared session store, and each
 * module's `BusinessServerUrl`. Called on a home whose settings read.
 */
export async function checkConnections(appDir: string): Promise<ConnectTarget[]> {
  const { settings, file } = loadHostSettings(appDir);
  const paths = createHostPaths(path.dirname(file));
  const targets: Array<Omit<ConnectTarget, 'result'> & { host?: string; port?: number; self?: boolean }> = [];
  try {
    const store = sessionStoreAddress(settings.AppSettings.SessionState);
    if (store)
      targets.push({
        what: `session store ${store.kind}`,
        setting: store.setting,
        address: `${store.host}:${store.port}`,
        host: store.host,
        port: store.port,
      });
  } catch (err) {
    targets.push({
      what: 'session store',
      setting: 'AppSettings:SessionState',
      address: '',
      detail: (err as Error).message,
    });
  }
  const ids = new Set(settings.AppSettings.LoadModules.map((n) => n.trim()));
  if (ids.has('wwwroot')) {
    const settingsFile = moduleJsonPath(settings, paths, 'wwwroot');
    try {
      const { moduleJson } = readModuleJsonFile(settingsFile);
      const wwwroot = parseWwwrootSettings({ moduleJson, settings, paths, settingsFile });
      const url = wwwroot.businessServerUrl;
      if (url.trim() !== '') {
        const setting = 'BusinessServerUrl (wwwroot, else AppSettings)';
        try {
          const parsed = new URL(url);
          const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
          const host = parsed.hostname.replace(/^\[|\]$/g, '');
          const self = isLocal(host) && port === settings.AppSettings.ServerPort;
          targets.push({ what: 'BusinessServerUrl', setting, address: url, host, port, self });
        } catch {
          targets.push({ what: 'BusinessServerUrl', setting, address: url, detail: 'not a URL' });
        }
      }
    } catch {
      // A module.json that does not read is already an error of the check itself.
    }
  }
  return Promise.all(
    targets.map(async ({ host, port, self, ...t }): Promise<ConnectTarget> => {
      if (host === undefined || port === undefined) return { ...t, result: 'failed' };
      if (self)
        return {
          ...t,
          result: 'skipped',
          detail: 'this host itself (AppSettings:ServerPort): it answers once ack serve runs',
        };
      const reason = await tryConnect(host, port);
      return reason === undefined
        ? { ...t, result: 'ok' }
        : { ...t, result: 'failed', detail: `cannot connect to ${host}:${port} (${reason})` };
    }),
  );
}

/** One line per target: `connect ok: ...`, `connect failed: ...`. */
export function connectLine(t: ConnectTarget): string {
  return `connect ${t.result}: ${t.what} ${t.address} (${t.setting})${t.detail ? `: ${t.detail}` : ''}`;
}
