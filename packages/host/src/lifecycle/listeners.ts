import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { HostSettings } from '../settings/schema.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from '../logging/logger.js';
import type { Upgrades } from '../websocket/index.js';
import { parseTimeSpanMs } from '../settings/time-span.js';

type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface ListenOptions {
  /** Default: `AppSettings:ServerPort` (8421). 0 picks a free port. */
  port?: number;
  /** Default: all interfaces. */
  host?: string;
  /** Port of the HTTPS listener, when a certificate is configured. Default: `ServerDevCertSslPort` (8443). */
  tlsPort?: number;
}

/**
 * The host's listeners: plain HTTP on `ServerPort`, and HTTPS on `ServerDevCertSslPort` when
 * `ServerDevCertFilePath` names a certificate (a PFX with `ServerDevCertPassword`, as the original
 * host takes, or a PEM certificate with `ServerDevCertKeyFilePath`). Both share the one request
 * listener and the `Kestrel:Limits` time-outs. As in the original, an HTTPS listener that cannot
 * start (bad certificate, port taken) is logged and the host serves plain HTTP only.
 */
export class Listeners {
  readonly server: http.Server;
  tlsServer: https.Server | undefined;
  url = '';
  tlsUrl = '';
  private readonly options: http.ServerOptions;

  constructor(
    private readonly settings: HostSettings,
    private readonly paths: HostPaths,
    private readonly onRequest: RequestListener,
    private readonly logger: Logger,
    private readonly upgrades?: Pick<Upgrades, 'attachUpgrades'>,
  ) {
    const limits = settings.Kestrel.Limits;
    const headersTimeout = parseTimeSpanMs(limits.RequestHeadersTimeout);
    this.options = {
      keepAliveTimeout: parseTimeSpanMs(limits.KeepAliveTimeout),
      headersTimeout,
      // How often Node looks for connections past their time-outs (default 30 s, too coarse).
      connectionsCheckingInterval: Math.max(250, Math.min(5_000, Math.floor(headersTimeout / 2))),
      // Bounds a request whose body trickles in; large uploads on slow links still get 10 minutes.
      requestTimeout: 600_000,
    };
    this.server = this.limit(http.createServer(this.options, onRequest));
    this.upgrades?.attachUpgrades(this.server);
  }

  async listen(options: ListenOptions = {}): Promise<string> {
    const app = this.settings.AppSettings;
    this.url = await listenOn(this.server, options.port ?? app.ServerPort, options.host, 'http');
    const tls = this.loadCertificate();
    if (tls) {
      const port = options.tlsPort ?? app.ServerDevCertSslPort;
      try {
        // A certificate that does not match its key or passphrase throws here.
        const server = this.limit(https.createServer({ ...this.options, ...tls }, this.onRequest));
        this.upgrades?.attachUpgrades(server);
        this.tlsUrl = await listenOn(server, port, options.host, 'https');
        this.tlsServer = server;
      } catch (err) {
        this.logger.error(`HTTPS listener not started on port ${port}: ${(err as Error).message}; serving plain HTTP only`);
      }
    }
    return this.url;
  }

  /** Stops accepting; idle keep-alive connections close as they become idle; the rest are cut after `graceMs`. */
  async close(graceMs: number): Promise<void> {
    await Promise.all([this.server, this.tlsServer].filter((s): s is http.Server => s !== undefined && s.listening).map((s) => closeGracefully(s, graceMs)));
  }

  private limit<S extends http.Server>(server: S): S {
    const max = this.settings.Kestrel.Limits.MaxConcurrentConnections;
    if (max !== null) server.maxConnections = max;
    return server;
  }

  private loadCertificate(): https.ServerOptions | undefined {
    const app = this.settings.AppSettings;
    if (app.ServerDevCertFilePath.trim() === '') return undefined;
    const certFile = this.paths.resolve(app.ServerDevCertFilePath);
    try {
      if (app.ServerDevCertKeyFilePath.trim() !== '') {
        return { cert: fs.readFileSync(certFile), key: fs.readFileSync(this.paths.resolve(app.ServerDevCertKeyFilePath)) };
      }
      return { pfx: fs.readFileSync(certFile), passphrase: app.ServerDevCertPassword };
    } catch (err) {
      this.logger.error(`HTTPS listener not started: cannot read the certificate (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      return undefined;
    }
  }
}

function listenOn(server: http.Server, port: number, host: string | undefined, scheme: 'http' | 'https'): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address() as AddressInfo;
      const shown = !host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : address.address;
      resolve(`${scheme}://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}`);
    });
  });
}

async function closeGracefully(server: http.Server, graceMs: number): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await stopped;
  clearInterval(sweep);
  clearTimeout(timer);
}
