// Why this file is long: `Listeners` opens every endpoint (HTTP/1.1, HTTPS with HTTP/2, the
// development-certificate listener), reloads certificates and closes them in the stop order; the
// parts share the servers' state, and splitting the class would pass that state around instead.
import http from 'node:http';
import { AckServerResponse } from '../http/response-head/response.js';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type tls from 'node:tls';
import type { HostSettings } from '../settings/schema.js';
import { SettingsError } from '../settings/load.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from '../logging/logger.js';
import type { Upgrades } from '../websocket/index.js';
import { AckIncomingMessage } from '../http/upgrade-offer.js';
import { parseTimeSpanMs } from '../settings/time-span.js';
import { AckHttp2Response, HTTP2_SERVER_CLASSES, MAX_HEADER_BYTES } from '../pipeline/http2-adapter.js';
import { planDevCertEndpoint, planKestrelEndpoints, type EndpointPlan, type Protocols } from './endpoints.js';
import { loadCertificate, watchCertificate, type LoadedCertificate } from './certificates.js';
import { createDevCertificate, devCertificateFiles, hasDevCertificate } from './dev-cert.js';
import type { ConnectionGuard } from './connection-guard.js';
import type { RequestHandlers } from '../pipeline/phases.js';
import type { Http2StreamEntry } from '../pipeline/http2-stream-lane.js';

export interface ListenOptions {
  /** Default: `AppSettings:ServerPort` (8421). 0 picks a free port. */
  port?: number;
  /**
   * Address to bind. Default: `AppSettings:ServerListenAddress` (127.0.0.1, this machine only);
   * `*`, `0.0.0.0` or `::` for every interface (docs/configuration.md).
   */
  host?: string;
  /**
   * Port of the `ServerDevCert*` HTTPS listener (default `ServerDevCertSslPort`, 8443). That listener
   * opens when `ServerDevCertFilePath` names a certificate, or when this is given: then, with no
   * certificate configured, it uses the development certificate (`ack serve --https-port`).
   */
  tlsPort?: number;
}

export interface ListeningEndpoint {
  name: string;
  url: string;
  protocols: Protocols;
}

interface Opened {
  server: NetServer;
  close(graceMs: number): Promise<void>;
  /** Rolling restart: tell clients to leave while still listening (`Listeners.drain`). */
  drain(): void;
  /** TLS servers: takes a renewed certificate for new connections. */
  renew?(options: tls.SecureContextOptions): void;
}

/**
 * The host's listeners (docs/protocols.md): plain HTTP/1.1 on `ServerPort`; the original host's
 * HTTPS listener on `ServerDevCertSslPort`; and each `Kestrel:Endpoints:<Name>`. A TLS listener
 * answers HTTP/2 and HTTP/1.1 on one port (ALPN); a cleartext endpoint with `Protocols: Http2`
 * answers h2c. Every certificate is loaded and checked before any port opens, so a bad one stops
 * start-up (exit 2, naming the setting), and is reloaded when its file is replaced on disk.
 */
export class Listeners {
  readonly server: http.Server;
  url = '';
  tlsUrl = '';
  readonly endpoints: ListeningEndpoint[] = [];
  private readonly http1Options: http.ServerOptions;
  /** A TLS handshake is part of getting the headers in: bounded like them (Node's default is 120 s). */
  private readonly handshakeTimeout: number;
  private readonly handlers: RequestHandlers;
  private readonly opened: Opened[] = [];
  private readonly unwatch: (() => void)[] = [];

  constructor(
    private readonly settings: HostSettings,
    private readonly paths: HostPaths,
    handlers: RequestHandlers,
    private readonly logger: Logger,
    /** Slow and greedy clients, on every listener (lifecycle/connection-guard.ts). */
    private readonly guard: ConnectionGuard,
    private readonly upgrades?: Pick<Upgrades, 'attachUpgrades'>,
    /** Metrics on each server, once its other listeners are on (metrics/host-metrics.ts). */
    private readonly observe?: (server: NetServer) => void,
  ) {
    const limits = settings.Kestrel.Limits;
    this.handlers = {
      http1: guard.http1(handlers.http1),
      http2Stream: handlers.http2Stream,
      http2: guard.http2(handlers.http2),
      clientError: handlers.clientError,
    };
    const headersTimeout = parseTimeSpanMs(limits.RequestHeadersTimeout);
    this.http1Options = {
      keepAliveTimeout: parseTimeSpanMs(limits.KeepAliveTimeout),
      headersTimeout,
      // How often Node looks for connections past their time-outs (default 30 s, too coarse).
      connectionsCheckingInterval: Math.max(250, Math.min(5_000, Math.floor(headersTimeout / 2))),
      // A last bound on any one request; a body that trickles is cut sooner by MinRequestBodyDataRate.
      requestTimeout: 600_000,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Holds the edge's headers until the head is written (docs/pipeline.md "Response heads").
      ServerResponse: AckServerResponse,
      // Only a WebSocket offer is an upgrade; `Upgrade: h2c` is served as HTTP/1.1 (docs/websocket.md).
      IncomingMessage: AckIncomingMessage,
    };
    this.handshakeTimeout = headersTimeout;
    this.server = this.limit(http.createServer(this.http1Options, this.handlers.http1), 'http1');
    this.upgrades?.attachUpgrades(this.server);
    this.attachClientErrors(this.server);
    this.observe?.(this.server);
    // Endpoint settings are checked at start-up, before anything listens.
    planKestrelEndpoints(settings);
  }

  async listen(asked: ListenOptions = {}): Promise<string> {
    const app = this.settings.AppSettings;
    const options = { ...asked, host: bindAddress(this.settings, asked.host) };
    const { plans, withHttps } = planEndpoints(this.settings, options);
    const certificates = plans.map((plan) => {
      if (!plan.certificate) return undefined;
      ensureDevCertificate(this.settings, this.paths, [plan], (line) => this.logger.info(line));
      return loadCertificate(plan.certificate, this.paths);
    });

    this.url = await listenOn(this.server, options.port ?? app.ServerPort, options.host, 'http').catch(
      listenerFailed('port'),
    );
    this.opened.push({
      server: this.server,
      close: (graceMs) => closeHttp1(this.server, graceMs),
      drain: () => drainHttp1(this.server),
    });
    for (const [i, plan] of plans.entries()) {
      const https = withHttps && i === 0;
      const url = await this.open(plan, certificates[i], https ? 'tlsPort' : `Kestrel:Endpoints:${plan.name}:Url`);
      this.endpoints.push({ name: plan.name, url, protocols: plan.protocols });
      if (withHttps && i === 0) this.tlsUrl = url;
    }
    return this.url;
  }

  /** Stops accepting; idle connections close now, busy ones when their requests end; the rest are cut after `graceMs`. */
  async close(graceMs: number): Promise<void> {
    for (const stop of this.unwatch.splice(0)) stop();
    this.guard.close();
    await Promise.all(
      this.opened
        .splice(0)
        .filter((o) => o.server.listening)
        .map((o) => o.close(graceMs)),
    );
  }

  /**
   * A worker retired in a rolling restart (docs/scale-out.md), before `close`: still listening, it
   * tells its clients to leave, for up to `drainMs` or until no connection is left. HTTP/1.1
   * responses carry `Connection: close`, so a client leaves a kept-alive connection after a response
   * instead of finding it closed under a request it just sent; HTTP/2 sessions get GOAWAY, so the
   * client opens its next streams elsewhere.
   */
  async drain(drainMs: number): Promise<void> {
    const servers = this.opened.filter((o) => o.server.listening);
    for (const o of servers) o.drain();
    const deadline = Date.now() + drainMs;
    const connections = (server: NetServer) =>
      new Promise<number>((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
    while (Date.now() < deadline) {
      const open = (await Promise.all(servers.map((o) => connections(o.server)))).reduce((a, b) => a + b, 0);
      if (open === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async open(
    plan: EndpointPlan,
    certificate: LoadedCertificate | undefined,
    portSource: ListenerFailure['listener'],
  ): Promise<string> {
    const opened = this.createServer(plan, certificate);
    // WebSocket upgrades arrive over HTTP/1.1 on every endpoint that speaks it (docs/websocket.md).
    if (plan.protocols !== 'Http2') {
      this.upgrades?.attachUpgrades(opened.server);
      this.attachClientErrors(opened.server);
    }
    this.observe?.(opened.server);
    const url = await listenOn(opened.server, plan.port, plan.host, plan.scheme).catch(listenerFailed(portSource));
    this.opened.push(opened);
    const { renew } = opened;
    if (certificate && plan.certificate && renew) {
      this.unwatch.push(watchCertificate(plan.certificate, certificate, this.paths, this.logger, renew));
    }
    const shown =
      plan.protocols === 'Http1AndHttp2'
        ? 'h2, http/1.1'
        : plan.protocols === 'Http2'
          ? plan.scheme === 'https'
            ? 'h2'
            : 'h2c'
          : 'http/1.1';
    this.logger.info(`endpoint ${plan.name} on ${url} (${shown})`);
    return url;
  }

  private createServer(plan: EndpointPlan, certificate: LoadedCertificate | undefined): Opened {
    const tlsOptions = certificate?.options ?? {};
    if (plan.protocols === 'Http1') {
      const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => this.handlers.http1(req, res);
      if (plan.scheme === 'http') {
        const server = this.limit(http.createServer(this.http1Options, onRequest), 'http1');
        return { server, close: (graceMs) => closeHttp1(server, graceMs), drain: () => drainHttp1(server) };
      }
      const server = this.limit(
        https.createServer({ ...this.http1Options, handshakeTimeout: this.handshakeTimeout, ...tlsOptions }, onRequest),
        'close',
      );
      return {
        server,
        close: (graceMs) => closeHttp1(server, graceMs),
        drain: () => drainHttp1(server),
        renew: (next) => server.setSecureContext(next),
      };
    }
    const http2Options: http2.ServerOptions = {
      ...HTTP2_SERVER_CLASSES,
      settings: { maxConcurrentStreams: this.settings.Kestrel.Limits.Http2.MaxStreamsPerConnection },
    };
    const tracker = new ConnectionTracker();
    const dispatch = (
      req: http.IncomingMessage | http2.Http2ServerRequest,
      res: http.ServerResponse | http2.Http2ServerResponse,
    ) => {
      if (req instanceof http2.Http2ServerRequest) {
        if (res instanceof AckHttp2Response) this.handlers.http2(req, res);
      } else if (res instanceof http.ServerResponse) {
        tracker.request(req.socket, res);
        this.handlers.http1(req, res);
      }
    };
    const secure =
      plan.scheme === 'https'
        ? http2.createSecureServer(
            {
              ...http2Options,
              handshakeTimeout: this.handshakeTimeout,
              ...tlsOptions,
              allowHTTP1: plan.protocols === 'Http1AndHttp2',
            },
            dispatch,
          )
        : undefined;
    const server = this.limit(secure ?? http2.createServer(http2Options, dispatch), 'close');
    this.guard.attachHttp2(server);
    if (this.handlers.http2Stream) takeStreams(server, this.handlers.http2Stream);
    // HTTP/1.1 on the same TLS port runs Node's HTTP/1 server code, which reads these from the server.
    Object.assign(server, {
      keepAliveTimeout: this.http1Options.keepAliveTimeout,
      headersTimeout: this.http1Options.headersTimeout,
      requestTimeout: this.http1Options.requestTimeout,
      connectionsCheckingInterval: this.http1Options.connectionsCheckingInterval,
      maxHeaderSize: MAX_HEADER_BYTES,
    });
    tracker.attach(server);
    return {
      server,
      close: (graceMs) => tracker.close(server, graceMs),
      drain: () => tracker.drain(),
      renew: secure && ((next) => secure.setSecureContext(next)),
    };
  }

  private attachClientErrors(server: NetServer): void {
    if (this.handlers.clientError) server.on('clientError', this.handlers.clientError);
  }

  private limit<S extends NetServer>(server: S, refusal: 'http1' | 'close'): S {
    const max = this.settings.Kestrel.Limits.MaxConcurrentConnections;
    if (max !== null) server.maxConnections = max;
    this.guard.attach(server, refusal);
    return server;
  }
}

/** The listeners `Listeners.listen` opens beside the plain one: the `ServerDevCert*` HTTPS listener first when asked for, then `Kestrel:Endpoints`. */
/**
 * The address the plain and `ServerDevCert*` listeners bind: the one asked for, else
 * `AppSettings:ServerListenAddress` (loopback by default, for `ack serve` and `createHost` alike);
 * undefined (every interface) for `*` or an empty value.
 */
export function bindAddress(settings: HostSettings, asked?: string): string | undefined {
  const configured = (asked ?? settings.AppSettings.ServerListenAddress).trim();
  return configured === '' || configured === '*' ? undefined : configured;
}

export function planEndpoints(
  settings: HostSettings,
  options: ListenOptions,
): { plans: EndpointPlan[]; withHttps: boolean } {
  const app = settings.AppSettings;
  const plans = planKestrelEndpoints(settings);
  const withHttps = app.ServerDevCertFilePath.trim() !== '' || options.tlsPort !== undefined;
  if (withHttps)
    plans.unshift(planDevCertEndpoint(settings, options.tlsPort ?? app.ServerDevCertSslPort, options.host));
  return { plans, withHttps };
}

/**
 * Makes the development certificate when a planned endpoint needs it and there is none, which only
 * `RunningEnvironment` `D` allows (docs/protocols.md). The primary of `ack serve --workers` calls it
 * before it forks, so that workers never make one at the same time.
 */
export function ensureDevCertificate(
  settings: HostSettings,
  paths: HostPaths,
  plans: readonly EndpointPlan[],
  log: (line: string) => void,
): void {
  const source = plans.map((plan) => plan.certificate).find((c) => c?.kind === 'dev');
  if (!source || source.kind !== 'dev' || hasDevCertificate(paths.serviceHome)) return;
  const dir = devCertificateFiles(paths.serviceHome).dir;
  const plan = plans.find((p) => p.certificate === source)!;
  if (settings.AppSettings.RunningEnvironment !== 'D') {
    throw new SettingsError(
      `${source.setting}: no certificate configured for the ${plan.name} endpoint, and no development certificate in ${dir} (one is made on first start only when RunningEnvironment is D; run ack dev-cert, or configure a certificate)`,
    );
  }
  createDevCertificate(paths.serviceHome);
  log(`development certificate created in ${dir} (self-signed for localhost; docs/protocols.md)`);
}

/**
 * HTTP/2 sessions and HTTP/1.1 connections of an HTTP/2 server (Node's `closeIdleConnections` is
 * only on `http.Server`): at shut-down each session gets GOAWAY and ends when its streams do, idle
 * HTTP/1.1 connections end now and busy ones after their response. (Idle sessions close after the
 * keep-alive time-out: lifecycle/connection-guard.ts.) While draining (a rolling restart),
 * sessions get GOAWAY while the server still listens, and HTTP/1.1 responses close their
 * connection. A stream that crossed the GOAWAY on the wire is refused (REFUSED_STREAM: never
 * processed, safe to retry, which browsers do); Node offers no GOAWAY that announces without
 * refusing (RFC 9113 section 6.8), see docs/scale-out.md.
 */
class ConnectionTracker {
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly busy = new Map<Socket, number>();
  /** Every TCP connection, whatever became of it (a TLS handshake never finished, a session gone). */
  private readonly connections = new Set<Socket>();
  private closing = false;
  private draining = false;

  attach(server: http2.Http2Server | http2.Http2SecureServer): void {
    server.on('connection', (socket: Socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('session', (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
      if (this.closing) session.close();
      // A client that connects while this server drains is told to go once its first request is
      // in: a GOAWAY before that request left would strand it on the client.
      else if (this.draining) session.once('stream', () => session.close());
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      if (socket.alpnProtocol === 'h2') return;
      this.busy.set(socket, 0);
      socket.once('close', () => this.busy.delete(socket));
    });
  }

  request(socket: Socket, res: http.ServerResponse): void {
    if (this.draining) res.shouldKeepAlive = false;
    this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (this.busy.get(socket) ?? 1) - 1;
      this.busy.set(socket, left);
      if (this.closing && left === 0) socket.end();
    });
  }

  drain(): void {
    this.draining = true;
    for (const session of this.sessions) session.close();
  }

  async close(server: NetServer, graceMs: number): Promise<void> {
    this.closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const session of this.sessions) session.close();
    for (const [socket, count] of this.busy) if (count === 0) socket.end();
    const timer = setTimeout(() => {
      for (const session of this.sessions) session.destroy();
      for (const socket of this.busy.keys()) socket.destroy();
      // Whatever still holds the server after the grace time goes too, or close would wait forever.
      for (const socket of this.connections) socket.destroy();
    }, graceMs);
    await stopped;
    clearTimeout(timer);
  }
}

/**
 * A listener that could not open (a port in use, no permission): `listener` says what chose its
 * port, so that a message can name it (`ack serve`: `--port`, `--https-port` or the setting).
 */
export interface ListenerFailure {
  /** `port` and `tlsPort`: the `ListenOptions` (else `ServerPort`, `ServerDevCertSslPort`); or an endpoint's `Url` key. */
  listener: 'port' | 'tlsPort' | `Kestrel:Endpoints:${string}:Url`;
}

const listenerFailed =
  (listener: ListenerFailure['listener']) =>
  (err: unknown): never => {
    throw Object.assign(err as Error, { listener });
  };

function listenOn(
  server: NetServer,
  port: number,
  host: string | undefined,
  scheme: 'http' | 'https',
): Promise<string> {
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

/** HTTP/1.1 while draining: every response from now on closes its connection. */
function drainHttp1(server: http.Server): void {
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.shouldKeepAlive = false;
  });
}

async function closeHttp1(server: http.Server, graceMs: number): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await stopped;
  clearTimeout(timer);
  clearInterval(sweep);
}

/**
 * Node's compatibility layer is a `stream` listener the server adds with its first `request`
 * listener; it builds an `Http2ServerRequest` and `Http2ServerResponse` for every stream. Here it
 * hears only the streams the stream lane leaves (docs/protocols.md "The stream lane").
 */
function takeStreams(server: http2.Http2Server | http2.Http2SecureServer, entry: Http2StreamEntry): void {
  const compatibility = server.rawListeners('stream');
  server.removeAllListeners('stream');
  server.on(
    'stream',
    (stream: http2.ServerHttp2Stream, headers: http.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => {
      if (entry(stream, headers, rawHeaders)) return;
      for (const listener of compatibility) Reflect.apply(listener, server, [stream, headers, flags, rawHeaders]);
    },
  );
}
