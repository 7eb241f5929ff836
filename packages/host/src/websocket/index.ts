import http from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { EventEmitter } from 'node:events';
import type * as Ws from 'ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { RequestHandler } from 'express';
import type { ModuleUpgrade, UpgradeRequest } from '../modules/contract.js';
import type { HostSettings } from '../settings/schema.js';
import type { Logger } from '../logging/logger.js';
import type { Edge } from '../pipeline/edge/index.js';
import { createIpAllowList } from '../pipeline/edge/ip-allow-list.js';
import { parseRequestPath } from '../http/request-path.js';
import { problemBody, type Problem } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { parseTimeSpanMs } from '../settings/time-span.js';
import { createUpgradeDecider } from './rules.js';
import { createMiddlewareRunner } from '../pipeline/express-adapter.js';

export { createUpgradeDecider, isSameOrigin } from './rules.js';

const requireCjs = createRequire(import.meta.url);
const loadWs = (): typeof Ws => requireCjs('ws');

/** Close code sent to every socket when the host stops (RFC 6455 "going away"). */
export const GOING_AWAY = 1001;

export interface Upgrades {
  /**
   * Puts the host's WebSocket handling on a Node server (http, https, or an HTTP/2 server that
   * allows HTTP/1.1). Does nothing when no module offers a socket, so such a server answers an
   * `Upgrade` request as an ordinary request.
   */
  attachUpgrades(server: EventEmitter): void;
  /** Sockets open now. */
  readonly open: number;
  /** Refuses new upgrades and closes every socket with 1001; terminates those that do not finish within `graceMs`. */
  closeAll(graceMs?: number): Promise<void>;
}

export interface UpgradeOptions {
  settings: HostSettings;
  edge: Edge;
  upgrades: readonly ModuleUpgrade[];
  /** The session and sign-in phases, run on the upgrade request so handlers see the same user as routes. */
  requestPhases: readonly RequestHandler[];
  logger: Logger;
}

/**
 * WebSocket upgrades for every module (docs/websocket.md). The host owns the rules (path, IP
 * allow-list, same origin or `WithOrigins`, `MaxConcurrentUpgradedConnections`), the session and
 * user of the request, the payload bound, heartbeats and the close on shut-down; a module's
 * handler only ever sees an accepted socket.
 */
export function createUpgrades(options: UpgradeOptions): Upgrades {
  const { settings, edge, logger } = options;
  const app = settings.AppSettings;
  const ws = app.WebSocket;
  const byPath = new Map(options.upgrades.map((u) => [parseRequestPath(u.path).folded, u] as const));
  const decide = createUpgradeDecider({
    paths: new Set(byPath.keys()),
    ipAllowed: createIpAllowList(app.WithOnlyIPs).allows,
    withOrigins: app.WithOrigins,
    maxUpgraded: settings.Kestrel.Limits.MaxConcurrentUpgradedConnections,
  });
  // `ws` loads only when a module offers a socket: most hosts have none, and start faster without it
  // (docs/architecture.md, "What loads only when used").
  let wsServer: WebSocketServer | undefined;
  const server = () =>
    (wsServer ??= new (loadWs().WebSocketServer)({
      noServer: true,
      maxPayload: ws.MaxPayloadBytes,
      perMessageDeflate: ws.EnablePerMessageDeflate,
      clientTracking: false,
    }));
  const sockets = new Set<WebSocket>();
  let reserved = 0;
  let closing = false;

  const alive = new WeakSet<WebSocket>();
  const heartbeatMs = parseTimeSpanMs(ws.KeepAliveInterval);
  const heartbeat =
    heartbeatMs > 0 && byPath.size > 0
      ? setInterval(() => {
          // A peer that did not answer the last ping within one interval is gone: drop it.
          for (const socket of sockets) {
            if (!alive.has(socket)) {
              socket.terminate();
              continue;
            }
            alive.delete(socket);
            try {
              socket.ping();
            } catch {
              socket.terminate(); // not open any more
            }
          }
        }, heartbeatMs)
      : undefined;
  heartbeat?.unref();

  // The phases read cookies and may load a session; the upgrade answer carries no cookie, so their
  // response is one that is never sent.
  const runMiddleware = createMiddlewareRunner(options.requestPhases);
  const runPhases = (req: http.IncomingMessage, done: (err?: unknown) => void) =>
    runMiddleware(req, new http.ServerResponse(req), done);

  const accept = (req: UpgradeRequest, socket: Duplex, head: Buffer, offer: ModuleUpgrade) => {
    // Released once: when ws accepts the socket, or when the handshake fails and the socket closes.
    let counted = true;
    const release = () => {
      if (counted) reserved--;
      counted = false;
    };
    socket.once('close', release);
    server().handleUpgrade(req, socket, head, (client) => {
      release();
      if (closing) return void client.close(GOING_AWAY, 'host shutting down');
      sockets.add(client);
      alive.add(client);
      client.on('pong', () => alive.add(client));
      client.on('error', (err) => logger.debug(`websocket ${req.ack.rawPath}: ${err.message}`));
      client.once('close', () => sockets.delete(client));
      const fail = (err: unknown) => {
        logger.error(`websocket handler for ${offer.path} failed`, err as Error);
        client.close(1011, 'handler failed');
      };
      try {
        void Promise.resolve(offer.handler(client, req)).catch(fail);
      } catch (err) {
        fail(err);
      }
    });
  };

  const onUpgrade = (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const req = request as UpgradeRequest;
    socket.on('error', () => socket.destroy());
    try {
      edge.begin(req);
    } catch {
      return refuse(socket, {
        status: 400,
        code: hostProblems.REQUEST_BAD_URL.code,
        detail: 'The request URL cannot be read.',
      });
    }
    // Two Host headers or a host AllowedHosts does not list (DNS rebinding): as for any request.
    const hostProblem = edge.refuseHost(req);
    if (hostProblem) return refuse(socket, hostProblem);
    // Matched on the path as the edge decoded it (docs/pipeline.md), like route prefixes.
    const path = req.ack.path.folded;
    const verdict = decide(
      {
        path,
        clientIp: req.ack.clientIp,
        protocol: req.ack.protocol,
        origin: req.headers.origin,
        host: req.headers.host,
        upgrade: req.headers.upgrade,
      },
      sockets.size + reserved,
      closing,
    );
    if (!verdict.ok) {
      if (verdict.problem.status !== 404)
        logger.info(`websocket ${req.ack.rawPath} refused (${verdict.problem.code}) from ${req.ack.clientIp}`);
      return refuse(socket, verdict.problem);
    }
    reserved++;
    runPhases(req, (err) => {
      if (err || socket.destroyed) {
        reserved--;
        if (socket.destroyed) return;
        if (err) logger.error(`websocket ${req.ack.rawPath}: session or sign-in failed`, err as Error);
        return refuse(socket, {
          status: 503,
          code: hostProblems.WEBSOCKET_SESSION_UNAVAILABLE.code,
          detail: 'The session could not be read; try again.',
        });
      }
      accept(req, socket, head, byPath.get(path)!);
    });
  };

  return {
    attachUpgrades(target) {
      if (byPath.size > 0) target.on('upgrade', onUpgrade);
    },
    get open() {
      return sockets.size;
    },
    async closeAll(graceMs = 2_000) {
      closing = true;
      if (heartbeat) clearInterval(heartbeat);
      const all = [...sockets];
      await Promise.all(
        all.map(
          (socket) =>
            new Promise<void>((resolve) => {
              if (socket.readyState === socket.CLOSED) return resolve();
              const timer = setTimeout(() => socket.terminate(), graceMs);
              socket.once('close', () => {
                clearTimeout(timer);
                resolve();
              });
              socket.close(GOING_AWAY, 'host shutting down');
            }),
        ),
      );
      wsServer?.close();
    },
  };
}

/** Answers a refused upgrade with a problem body (no upgrade happens) and ends the connection. */
function refuse(socket: Duplex, problem: Problem): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(problemBody(problem));
  socket.end(
    `HTTP/1.1 ${problem.status} ${http.STATUS_CODES[problem.status] ?? ''}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Cache-Control: no-store\r\n\r\n' +
      body,
  );
}
