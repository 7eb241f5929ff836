import type http from 'node:http';
import http2 from 'node:http2';
import type { Server as NetServer, Socket } from 'node:net';
import type { KestrelSettings } from '../settings/schema.js';
import type { Logger } from '../logging/logger.js';
import { problemBody } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { parseTimeSpanMs } from '../settings/time-span.js';
import { normalizeIp } from '../pipeline/edge/client-address.js';
import { createResponseStallWatch } from './response-stall.js';

type Http1Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;
type Http2Listener<Res extends http2.Http2ServerResponse> = (req: http2.Http2ServerRequest, res: Res) => void;

/**
 * Socket-level limits that keep slow or greedy clients from holding the host (docs/pipeline.md,
 * "Slow and greedy clients"), on every listener: plain HTTP/1.1, HTTPS, HTTP/2 over TLS and h2c.
 * - `MaxConnectionsPerClient`: counted per peer address on the TCP socket when it opens, whatever
 *   protocol it will speak (trusted proxies are not counted: every client behind them shares
 *   their address);
 * - `MinRequestBodyDataRate`: only requests that carry a body are watched, by one shared timer, so
 *   a request without a body pays two header reads. Over HTTP/2 each stream is measured on its own
 *   and a cut ends that stream, not the connection;
 * - an error answered while a body is still unread closes the connection instead of waiting for
 *   (and discarding) a body that may never come; over HTTP/2 it resets that stream only;
 * - slow headers: HTTP/1.1 has Node's `headersTimeout` and TLS a handshake time-out (both set by
 *   the listeners); an HTTP/2 connection must open its first stream within
 *   `RequestHeadersTimeout` and is closed after `KeepAliveTimeout` without an open stream,
 *   whatever frames it keeps sending;
 * - `ResponseStallTimeout`: a response the client takes nothing of is cut (the HTTP/1.1 socket, or
 *   the HTTP/2 stream), which closes the file it was sending (lifecycle/response-stall.ts);
 * - `Http2:MaxStreamsPerClient`: open HTTP/2 streams of one client address over all its
 *   connections; one more is refused with `RST_STREAM REFUSED_STREAM`, which a client may retry.
 */
export interface ConnectionGuard {
  /** Wraps the HTTP/1.1 request listener (body watch, close after an early error). */
  http1(listener: Http1Listener): Http1Listener;
  /** Wraps the HTTP/2 request listener (body watch per stream). */
  http2<Res extends http2.Http2ServerResponse>(listener: Http2Listener<Res>): Http2Listener<Res>;
  /**
   * Counts connections per client address on `server`. `refusal` says how the one over the limit
   * is told: `http1` answers a 429 problem (a plain HTTP/1.1 port); `close` just closes it (TLS,
   * where nothing can be said before the handshake, and h2c).
   */
  attach(server: NetServer, refusal: 'http1' | 'close'): void;
  /** HTTP/2 servers: time limits on sessions without an open stream. */
  attachHttp2(server: http2.Http2Server | http2.Http2SecureServer): void;
  close(): void;
}

interface Watched {
  req: http.IncomingMessage | http2.Http2ServerRequest;
  res: http.ServerResponse | http2.Http2ServerResponse;
  /** Body bytes received so far. */
  received(): number;
  /** True while the host itself holds the body back (not reading it): that time is not the client's fault. */
  held(): boolean;
  /** Ends the request when its answer already went out (or cannot): the connection, or the HTTP/2 stream. */
  drop(): void;
  /** After the 408 went out (HTTP/1.1: the connection closes; HTTP/2: the stream already ends). */
  afterAnswer(): void;
  startedAt: number;
  /** Time the body was held back by the host (`held`). */
  heldMs: number;
  lastTick: number;
}

const TICK_MS = 1000;
/** A lingering close ends once no body byte came for this long, or after `LINGER_MAX_MS` in all. */
const LINGER_IDLE_MS = 2000;
const LINGER_MAX_MS = 10_000;

/**
 * A lingering close (RFC 9112 9.6) for a connection answered before its body was read. Node closes
 * such a socket as soon as the answer is written; the client, still sending its body, then gets a
 * TCP reset, which can destroy the answer in its receive buffer (`ack contract-sync` with a wrong key
 * saw EPIPE instead of the 401). Instead the host sends its FIN after the answer and reads and
 * discards what still comes, until the body ends, the client closes, nothing came for
 * `LINGER_IDLE_MS`, or `LINGER_MAX_MS` passed; then it closes.
 */
function lingerBeforeClosing(req: http.IncomingMessage): void {
  const socket = req.socket;
  // Node calls `destroySoon` once the last answer on a `Connection: close` socket is written.
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    const destroy = () => {
      clearInterval(idle);
      clearTimeout(cap);
      this.destroy();
    };
    // As Node's own `destroySoon`: the answer is written out before the socket goes.
    const close = () => {
      clearInterval(idle);
      if (this.writableFinished) destroy();
      else this.once('finish', destroy);
    };
    // Counted on the socket: Node's parser discards the body of an answered request itself,
    // without request events.
    let seen = this.bytesRead;
    const idle = setInterval(() => {
      if (this.bytesRead === seen) close();
      seen = this.bytesRead;
    }, LINGER_IDLE_MS);
    const cap = setTimeout(destroy, LINGER_MAX_MS);
    if (req.complete) return close();
    this.once('end', close);
    this.once('close', destroy);
    req.once('end', close);
    req.resume(); // discarded
  };
}

function resetConnection(socket: Socket): void {
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy(); // TLS: its handle is not a TCP one
  }
}

const carriesBody = (headers: http.IncomingHttpHeaders) => {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
};

export function createConnectionGuard(
  limits: KestrelSettings['Limits'],
  trustsProxy: (address: string | undefined) => boolean,
  logger: Logger,
): ConnectionGuard {
  const rate = limits.MinRequestBodyDataRate;
  const minBytesPerSecond = rate ? rate.BytesPerSecond : 0;
  const graceMs = rate ? parseTimeSpanMs(rate.GracePeriod) : 0;
  const headersTimeoutMs = parseTimeSpanMs(limits.RequestHeadersTimeout);
  const keepAliveMs = parseTimeSpanMs(limits.KeepAliveTimeout);
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;
  let cuts = 0;

  // One periodic tick for every time limit watched here: request bodies below the minimum rate
  // and responses the client stopped taking (`stalls`, below). It runs only while either watches.
  const tick = () => {
    const now = Date.now();
    for (const w of watched) {
      if (w.req.complete || w.req.destroyed) {
        watched.delete(w);
        continue;
      }
      if (w.held() && !w.res.writableEnded) w.heldMs += now - w.lastTick;
      w.lastTick = now;
      const elapsed = now - w.startedAt - w.heldMs;
      if (elapsed < graceMs) continue;
      if (w.received() * 1000 >= minBytesPerSecond * elapsed) continue;
      watched.delete(w);
      cut(w);
    }
    stalls?.tick(now);
    if (watched.size === 0 && (stalls?.size ?? 0) === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const ticking = () => {
    timer ??= setInterval(tick, TICK_MS).unref();
  };

  const cut = (w: Watched) => {
    cuts++;
    if (cuts === 1 || cuts % 100 === 0) {
      logger.warn(
        `request body below ${minBytesPerSecond} bytes/s after ${graceMs} ms: connection cut (${cuts} so far)`,
      );
    }
    const { res } = w;
    if (res.headersSent || res.writableEnded) return w.drop();
    const body = JSON.stringify(
      problemBody({
        status: 408,
        code: hostProblems.REQUEST_BODY_TOO_SLOW.code,
        detail: `The request body arrived slower than ${minBytesPerSecond} bytes per second.`,
      }),
    );
    res.statusCode = 408;
    // HTTP/1.1 only: the HTTP/2 response drops it (pipeline/http2-adapter.ts) and the stream is reset.
    res.setHeader('Connection', 'close');
    res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.setHeader('Cache-Control', 'no-store');
    res.end(body, () => w.afterAnswer());
  };

  const watch = (w: Omit<Watched, 'startedAt' | 'heldMs' | 'lastTick'>) => {
    const now = Date.now();
    watched.add({ ...w, startedAt: now, heldMs: 0, lastTick: now });
    ticking();
  };

  const closeAfterEarlyError = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const writeHead = res.writeHead;
    // Decided when the status line is written: an error answered before the whole body arrived.
    res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
      const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
      if (status >= 400 && !req.complete) {
        this.setHeader('Connection', 'close');
        lingerBeforeClosing(req);
      }
      return writeHead.apply(this, args);
    } as typeof writeHead;
  };

  // Node ends an HTTP/1.1 request stream with its connection only while the request is unanswered:
  // once the answer went out (an early error, a 408), a body still being read would wait forever
  // and its reader (an upload's temporary file) with it. Ending it with the connection releases
  // both. (An HTTP/2 request ends with its stream: Node emits `aborted` and `close` then.)
  const endWithConnection = (req: http.IncomingMessage) => {
    const socket = req.socket;
    const onClose = () => {
      if (!req.complete && !req.destroyed) req.destroy();
    };
    socket.once('close', onClose);
    req.once('close', () => socket.off('close', onClose));
  };

  const stallMs = limits.ResponseStallTimeout === null ? null : parseTimeSpanMs(limits.ResponseStallTimeout);
  const stalls =
    stallMs === null
      ? undefined
      : createResponseStallWatch(stallMs, (count) => {
          if (count === 1 || count % 100 === 0) {
            logger.warn(`response not taken by its client for ${stallMs} ms: cut (${count} so far)`);
          }
        });
  // HTTP/1.1: watched per socket (one response at a time), TLS or not, from its first request.
  const watchedSockets = new WeakSet<Socket>();
  const maxStreamsPerClient = limits.Http2.MaxStreamsPerClient;
  const streamsPerClient = new Map<string, number>();

  const perClient = new Map<string, number>();
  const maxPerClient = limits.MaxConnectionsPerClient;
  const tooMany = () => {
    const body = JSON.stringify(
      problemBody({
        status: 429,
        code: hostProblems.REQUEST_TOO_MANY_CONNECTIONS.code,
        detail: `This client address already holds ${maxPerClient} connections.`,
      }),
    );
    return `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  };

  return {
    http1(listener) {
      return (req, res) => {
        const socket = req.socket;
        if (stalls && !watchedSockets.has(socket)) {
          watchedSockets.add(socket);
          // A reset, not a FIN: a FIN waits behind the bytes the client is not taking.
          stalls.watch(socket, () => resetConnection(socket));
          ticking();
        }
        if (carriesBody(req.headers)) {
          closeAfterEarlyError(req, res);
          endWithConnection(req);
          if (rate && !req.complete) {
            const socket = req.socket;
            const startBytes = socket.bytesRead;
            watch({
              req,
              res,
              received: () => socket.bytesRead - startBytes,
              // Bytes waiting in the request stream: the handler is not reading yet (back-pressure).
              held: () => req.readableLength > 0,
              drop: () => socket.destroy(),
              afterAnswer: () => socket.destroy(),
            });
          }
        }
        listener(req, res);
      };
    },
    http2(listener) {
      return (req, res) => {
        // `stream.endAfterHeaders` is false when a body follows, with or without a length.
        const stream = req.stream;
        if (!stream.endAfterHeaders && !req.complete) {
          const reset = (code: number) => {
            if (!stream.closed && !stream.destroyed) stream.close(code);
          };
          // An error answered before the body was read (a 404, a 413, a 408) ends the stream with
          // RST_STREAM NO_ERROR, HTTP/2's "stop sending" (RFC 9113 8.1); the connection stays. On the
          // next turn, as Node does itself for a body never read, so that the answer's end goes out
          // first. (The response's own `finish` comes only with the stream's close.)
          stream.once('finish', () =>
            setImmediate(() => {
              if (res.statusCode >= 400 && !req.complete) reset(http2.constants.NGHTTP2_NO_ERROR);
            }),
          );
          if (rate) {
            // Counted once the request reads its stream (Node starts the flow then, and data that
            // waited flows after 'resume'): a listener before that would take the flow over, and
            // change how Node ends a stream whose body was never read.
            let bytes = 0;
            stream.once('resume', () => stream.on('data', (chunk: Buffer) => (bytes += chunk.length)));
            watch({
              req,
              res,
              received: () => bytes,
              // Not reading yet, paused (back-pressure), or bytes waiting in the request.
              held: () => stream.readableFlowing !== true || req.readableLength > 0,
              drop: () => reset(http2.constants.NGHTTP2_CANCEL),
              afterAnswer: () => {},
            });
          }
        }
        listener(req, res);
      };
    },
    attach(server, refusal) {
      if (maxPerClient === null) return;
      server.on('connection', (socket: Socket) => {
        if (trustsProxy(socket.remoteAddress)) return;
        const address = normalizeIp(socket.remoteAddress);
        const open = (perClient.get(address) ?? 0) + 1;
        if (open > maxPerClient) {
          if (refusal === 'http1') {
            socket.end(tooMany());
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
    attachHttp2(server) {
      server.on('session', (session: http2.ServerHttp2Session) => {
        let open = 0;
        let idle: NodeJS.Timeout | undefined;
        // No stream open: the first within RequestHeadersTimeout, the next within KeepAliveTimeout.
        // Counted on streams, not frames, so PINGs or a HEADERS frame never finished do not hold it.
        const arm = (ms: number) => {
          idle = setTimeout(() => {
            if (!session.closed && !session.destroyed) session.close();
          }, ms);
          idle.unref();
        };
        arm(headersTimeoutMs);
        const address = normalizeIp(session.socket?.remoteAddress);
        const capped = maxStreamsPerClient !== null && !trustsProxy(session.socket?.remoteAddress);
        session.on('stream', (stream: http2.ServerHttp2Stream) => {
          open++;
          clearTimeout(idle);
          stream.once('close', () => {
            if (--open === 0 && !session.closed) arm(keepAliveMs);
          });
          if (capped) {
            const held = (streamsPerClient.get(address) ?? 0) + 1;
            streamsPerClient.set(address, held);
            stream.once('close', () => {
              const left = (streamsPerClient.get(address) ?? 1) - 1;
              if (left <= 0) streamsPerClient.delete(address);
              else streamsPerClient.set(address, left);
            });
            if (held > maxStreamsPerClient) {
              stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
              return;
            }
          }
          if (stalls) {
            stalls.watch(stream, () => {
              if (!stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
            });
            ticking();
          }
        });
        session.once('close', () => clearTimeout(idle));
      });
    },
    close() {
      stalls?.close();
      if (timer) clearInterval(timer);
      timer = undefined;
      watched.clear();
    },
  };
}
