import type http from 'node:http';
import type { Socket } from 'node:net';
import type { KestrelSettings } from '../settings/schema.js';
import type { Logger } from '../logging/logger.js';
import { problemBody } from '../http/problem.js';
import { parseTimeSpanMs } from '../settings/time-span.js';
import { normalizeIp, type ForwardedPolicy } from '../pipeline/edge/client-address.js';

type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * Socket-level limits that keep slow or greedy clients from holding the host (docs/pipeline.md,
 * "Slow and greedy clients"):
 * - `MaxConnectionsPerClient`: counted per peer address when a connection opens (trusted proxies
 *   are not counted: every client behind them shares their address);
 * - `MinRequestBodyDataRate`: only requests that carry a body are watched, by one shared timer, so
 *   a request without a body pays two header reads;
 * - an error answered while the body is still unread closes the connection instead of waiting
 *   for (and discarding) a body that may never come.
 */
export interface ConnectionGuard {
  /** Wraps the request listener (body watch, close after an early error). */
  wrap(listener: RequestListener): RequestListener;
  /** Counts connections per client address on `server`. */
  attach(server: http.Server, plainHttp: boolean): void;
  close(): void;
}

interface Watched {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  socket: Socket;
  startedAt: number;
  startBytes: number;
  /** Time the host itself held the body back (not read by the handler): not the client's fault. */
  heldMs: number;
  lastTick: number;
}

const TICK_MS = 1000;

export function createConnectionGuard(limits: KestrelSettings['Limits'], forwarded: ForwardedPolicy, logger: Logger): ConnectionGuard {
  const rate = limits.MinRequestBodyDataRate;
  const minBytesPerSecond = rate ? rate.BytesPerSecond : 0;
  const graceMs = rate ? parseTimeSpanMs(rate.GracePeriod) : 0;
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;
  let cuts = 0;

  const tick = () => {
    const now = Date.now();
    for (const w of watched) {
      if (w.req.complete || w.socket.destroyed) {
        watched.delete(w);
        continue;
      }
      // Bytes waiting in the request stream mean the handler is not reading yet (back-pressure):
      // that time does not count against the client.
      if (w.req.readableLength > 0 && !w.res.writableEnded) w.heldMs += now - w.lastTick;
      w.lastTick = now;
      const elapsed = now - w.startedAt - w.heldMs;
      if (elapsed < graceMs) continue;
      const received = w.socket.bytesRead - w.startBytes;
      if (received * 1000 >= minBytesPerSecond * elapsed) continue;
      watched.delete(w);
      cut(w);
    }
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  const cut = (w: Watched) => {
    cuts++;
    if (cuts === 1 || cuts % 100 === 0) {
      logger.warn(`request body below ${minBytesPerSecond} bytes/s after ${graceMs} ms: connection cut (${cuts} so far)`);
    }
    const { res, socket } = w;
    if (res.headersSent || res.writableEnded) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(problemBody({
      status: 408,
      code: 'request.body_too_slow',
      detail: `The request body arrived slower than ${minBytesPerSecond} bytes per second.`,
    }));
    res.statusCode = 408;
    res.setHeader('Connection', 'close');
    res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.setHeader('Cache-Control', 'no-store');
    res.end(body, () => socket.destroy());
  };

  const watch = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const now = Date.now();
    watched.add({ req, res, socket: req.socket, startedAt: now, startBytes: req.socket.bytesRead, heldMs: 0, lastTick: now });
    timer ??= setInterval(tick, TICK_MS).unref();
  };

  const closeAfterEarlyError = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const writeHead = res.writeHead;
    // Decided when the status line is written: an error answered before the whole body arrived.
    res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
      const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
      if (status >= 400 && !req.complete) this.setHeader('Connection', 'close');
      return writeHead.apply(this, args);
    } as typeof writeHead;
  };

  // Node ends a request stream with its connection only while the request is unanswered: once the
  // answer went out (an early error, a 408), a body still being read would wait forever and its
  // reader (an upload's temporary file) with it. Ending it with the connection releases both.
  const endWithConnection = (req: http.IncomingMessage) => {
    const socket = req.socket;
    const onClose = () => {
      if (!req.complete && !req.destroyed) req.destroy();
    };
    socket.once('close', onClose);
    req.once('close', () => socket.off('close', onClose));
  };

  const perClient = new Map<string, number>();
  const maxPerClient = limits.MaxConnectionsPerClient;

  return {
    wrap(listener) {
      return (req, res) => {
        const length = req.headers['content-length'];
        if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) {
          closeAfterEarlyError(req, res);
          endWithConnection(req);
          if (rate && !req.complete) watch(req, res);
        }
        listener(req, res);
      };
    },
    attach(server, plainHttp) {
      if (maxPerClient === null) return;
      server.on('connection', (socket: Socket) => {
        const address = normalizeIp(socket.remoteAddress);
        if (forwarded.enabled && forwarded.trusted.has(address)) return;
        const open = (perClient.get(address) ?? 0) + 1;
        if (open > maxPerClient) {
          if (plainHttp) {
            const body = JSON.stringify(problemBody({ status: 429, code: 'request.too_many_connections', detail: `This client address already holds ${maxPerClient} connections.` }));
            socket.end(`HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
            socket.setTimeout(5000, () => socket.destroy());
          } else socket.destroy();
          return;
        }
        perClient.set(address, open);
        socket.once('close', () => {
          const left = (perClient.get(address) ?? 1) - 1;
          if (left <= 0) perClient.delete(address);
          else perClient.set(address, left);
        });
      });
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      watched.clear();
    },
  };
}
