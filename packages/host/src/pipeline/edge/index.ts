import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { RawHandler, RawRequest, RawResponse } from '../../http/exchange.js';
import type { HostSettings } from '../../settings/schema.js';
import type { HostPaths } from '../../paths/host-paths.js';
import type { Logger } from '../../logging/logger.js';
import { MALFORMED_URL_PROBLEM, sendProblem, type Problem } from '../../http/problem.js';
import { hostProblems } from '../../http/problem-codes.js';
import { oweEdgeHeaders } from '../../http/response-head/response.js';
import { createForwardedPolicy, normalizeIp, resolveClient } from './client-address.js';
import { createIpAllowList } from './ip-allow-list.js';
import { computeSecurityHeaders } from './security-headers.js';
import { accessLine, countBodyBytes, refusedAccessLine } from './access-log.js';
import { createCorsHandler } from './cors-policy.js';
import { createHostFilter } from './host-filter.js';
import { parseRequestPath } from '../../http/request-path.js';
import { declaredBodyTooLarge } from '../../http/body-bound.js';
import type { HostMetrics } from '../../metrics/host-metrics.js';
import type { Tracing } from '../../tracing/index.js';
import { runHandlers, type PhaseHandler } from '../run-handlers.js';

/**
 * Phase 1 of the pipeline (docs/pipeline.md): one implementation of every edge behaviour, run for every
 * request whatever path answers it (lean static path or Express routes). Built once at start.
 */
export interface Edge {
  /** Fills `req.ack`; must run first. */
  begin(req: RawRequest): void;
  /**
   * Runs the phases (`runHandlers`) inside the request's trace, begun here (docs/operations.md
   * "Traces"): a request without one runs them as they are.
   */
  run<Req extends RawRequest, Res extends RawResponse>(
    handlers: readonly PhaseHandler<Req, Res>[],
    req: Req,
    res: Res,
    done: (req: Req, res: Res) => void,
    fail: (err: unknown, req: Req, res: Res) => void,
  ): void;
  handlers: RawHandler[];
  /**
   * Whether a peer address is a trusted proxy: Express's `trust proxy`, so that `req.secure` and
   * `req.ip` (read by express-session for `Secure` cookies) agree with `req.ack` behind the edge.
   */
  trustsProxy(address: string | undefined): boolean;
  /**
   * The `Host` rules (two `Host` headers, `AllowedHosts`): the problem to answer, or undefined.
   * Run by the edge handlers; WebSocket upgrades, which skip them, run it themselves.
   */
  refuseHost(req: RawRequest): Problem | undefined;
  /**
   * For a server's `clientError`: a request Node's HTTP/1.1 parser refused (or whose head timed
   * out) gets the answer Node gives it and an access line; undefined when access lines are off,
   * leaving Node's own handling.
   */
  clientError: ((err: ClientError, socket: Duplex) => void) | undefined;
}

/** What Node's HTTP/1.1 server passes to `clientError`. */
export type ClientError = Error & { code?: string; rawPacket?: Buffer };

/** The status of Node's own answer to each refusal (node:http's `socketOnError`). */
function refusalStatus(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

let sequence = 0;
const bootId = Date.now().toString(36);
const nextRequestId = () => `${bootId}-${(++sequence).toString(36)}`;

/** An absolute-form request target (RFC 9112 3.2.2): scheme, authority, then the path and query. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([^#]*)/i;

/** Counts the `Host` fields as sent: Node keeps only the first of several. */
function hostFieldCount(raw: string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') count++;
  return count;
}

/**
 * `first`: handlers that run before every other edge check (the health URLs, which a balancer
 * probes by address, without the client address or Host rules that apply to people).
 */
export function createEdge(
  settings: HostSettings,
  paths: HostPaths,
  logger: Logger,
  tracing: Tracing,
  first: readonly RawHandler[] = [],
  metrics?: Pick<HostMetrics, 'track'>,
): Edge {
  const app = settings.AppSettings;
  const forwarded = createForwardedPolicy(app.UseForwardProxy, app.ForwardProxyIP, app.UseSameIPProxy);
  const allowList = createIpAllowList(app.WithOnlyIPs);
  if (allowList.wildcard && app.Security.WarnOnWildcardAllowClientIP) {
    logger.warn('WithOnlyIPs contains "*": every client address is allowed');
  }
  const csp = readCsp(paths, app.IsEnabledCSP, logger);
  // Two sets: the default policy's `upgrade-insecure-requests` would break every screen served over
  // plain HTTP (its scripts and styles would be asked for over HTTPS), so only HTTPS gets it.
  const securityHeaders = computeSecurityHeaders(app.Security, app.IsEnabledCSP, csp, false);
  const secureHeaders = computeSecurityHeaders(app.Security, app.IsEnabledCSP, csp, true);
  const maxBody = settings.Kestrel.Limits.MaxRequestBodySize;
  const hostFilter = createHostFilter(settings.AllowedHosts);
  // The health URLs come first, before the access line: a balancer's probes every second or two
  // would bury the requests (docs/operations.md "Health").
  const handlers: RawHandler[] = [...first];
  // Then the request is counted, whatever answers it (docs/operations.md "Metrics").
  if (metrics) {
    handlers.push((req, res, next) => {
      metrics.track(req, res);
      next();
    });
  }
  let clientError: Edge['clientError'];
  // Before the edge's checks, so every answer has its line, the edge's own refusals
  // (a bad percent-encoding, a second Host, a declared body over the limit, a CORS preflight)
  // included: one line per request (docs/logging.md).
  if (app.UseHttpLogging) {
    const access = logger.child('http');
    handlers.push((req, res, next) => {
      const sent = countBodyBytes(res);
      res.once('finish', () => {
        access.info(accessLine(req, res, sent()), req.ack.trace && { traceId: req.ack.trace.traceId });
      });
      next();
    });
    clientError = (err, duplex) => {
      // As Node answers when nothing listens (docs/logging.md): only when the connection can still
      // take an answer, and not in the middle of a response already going out.
      const socket = duplex as Socket & { _httpMessage?: { _headerSent?: boolean } };
      if (!socket.writable || socket._httpMessage?._headerSent) return void socket.destroy();
      const status = refusalStatus(err.code);
      socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
      socket.destroySoon();
      access.info(refusedAccessLine(normalizeIp(socket.remoteAddress), err.rawPacket, status, nextRequestId()));
    };
  }

  if (!allowList.open) {
    handlers.push((req, res, next) => {
      if (allowList.allows(req.ack.clientIp)) return next();
      sendProblem(
        res,
        { status: 403, code: hostProblems.HOST_IP_NOT_ALLOWED.code, detail: 'This client address is not allowed.' },
        req.method,
      );
    });
  }
  const refuseHost = (req: RawRequest): Problem | undefined => {
    // One request, one Host (RFC 9112 3.2): two are a smuggling or cache-poisoning attempt.
    if (hostFieldCount(req.rawHeaders) > 1) {
      return {
        status: 400,
        code: hostProblems.REQUEST_DUPLICATE_HOST.code,
        detail: 'The request has more than one Host header.',
      };
    }
    if (!hostFilter.open && !hostFilter.allows(req.headers.host)) {
      return {
        status: 400,
        code: hostProblems.REQUEST_HOST_NOT_ALLOWED.code,
        detail: 'The Host header names a host this server does not answer for (AllowedHosts).',
      };
    }
    return undefined;
  };
  handlers.push((req, res, next) => {
    const hostProblem = refuseHost(req);
    if (hostProblem) return sendProblem(res, hostProblem, req.method);
    // A malformed percent-encoding cannot name any file or route: refuse it once, here.
    if (!req.ack.path.wellFormed) {
      return sendProblem(res, MALFORMED_URL_PROBLEM, req.method);
    }
    const tooLarge = declaredBodyTooLarge(req.headers, maxBody);
    if (tooLarge) return sendProblem(res, tooLarge.problem, req.method);
    // Held until the head is written, so a prepared head writes them in one call (docs/pipeline.md).
    oweEdgeHeaders(res, req.ack.protocol === 'https' ? secureHeaders : securityHeaders);
    next();
  });
  handlers.push(createCorsHandler(app.WithOrigins, app.Security.EnablePublicCorsPolicy));
  return {
    handlers,
    refuseHost,
    clientError,
    trustsProxy: (address) => forwarded.enabled && forwarded.trusted.has(normalizeIp(address)),
    run(list, req, res, done, fail) {
      const trace = tracing.start(req, res);
      if (trace === undefined) runHandlers(list, req, res, done, fail);
      else tracing.context.run(trace, runHandlers, list, req, res, done, fail);
    },
    begin(req) {
      let url = req.url ?? '/';
      if (url.charCodeAt(0) !== 47 /* '/' */) {
        // Absolute form: routed by its path; its authority replaces the Host header (RFC 9112 3.2.2).
        const m = ABSOLUTE_FORM.exec(url);
        if (m) {
          url = m[2] === '' ? '/' : m[2]!.startsWith('?') ? `/${m[2]}` : m[2]!;
          req.url = url;
          const authority = m[1]!.slice(m[1]!.lastIndexOf('@') + 1);
          if (authority !== '') req.headers.host = authority;
        }
      }
      const q = url.indexOf('?');
      const { ip, protocol } = resolveClient(
        forwarded,
        req.socket.remoteAddress,
        req.socket.encrypted === true,
        req.headers['x-forwarded-for'],
        req.headers['x-forwarded-proto'],
      );
      const id = nextRequestId();
      const rawPath = q === -1 ? url : url.slice(0, q);
      req.ack = {
        id,
        clientIp: ip,
        protocol,
        rawPath,
        path: parseRequestPath(rawPath),
        rawQuery: q === -1 ? '' : url.slice(q + 1),
        startedAt: process.hrtime.bigint(),
        trace: undefined,
      };
    },
  };
}

function readCsp(paths: HostPaths, enabled: boolean, logger: Logger): string | undefined {
  if (!enabled) return undefined;
  const file = paths.resolve('content-security-policy.txt');
  try {
    return fs.readFileSync(file, 'utf8').replace(/\s+/g, ' ').trim() || undefined;
  } catch {
    logger.info(`IsEnabledCSP: no ${file}; using helmet's default policy`);
    return undefined;
  }
}
