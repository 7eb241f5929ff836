import type http from 'node:http';
import type http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import compression from 'compression';
import type { ModuleRoutes, ModuleUpgrade } from '../modules/contract.js';
import type { AckRequest, Capability, RawHandler, RawRequest, RawResponse } from '../http/exchange.js';
import type { LoadedModule } from '../modules/load-modules.js';
import { sendProblem } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import type { Edge } from './edge/index.js';
import type { PhaseHandler } from './run-handlers.js';
import { sendNotFound } from './errors.js';
import { adaptHttp2, headerListBytes, MAX_HEADER_BYTES, type AckHttp2Response } from './http2-adapter.js';
import { createHttp1Express, createHttp2Express, handToExpress } from './express-adapter.js';
import { createHttp2StreamLane, type Http2StreamEntry } from './http2-stream-lane.js';

/** Answers an error with the host's one error responder (pipeline/errors.ts). */
export type RespondError = (err: unknown, req: RawRequest, res: RawResponse) => void;

/**
 * The pipeline as data (docs/pipeline.md), in the order a request walks it: edge, public, then
 * Express (`middleware`: session and sign-in; then the routes), static, not found, errors.
 */
export interface Phases {
  edge: Edge;
  public: readonly RawHandler[];
  /** In front of every route, after compression: the session (when on) and sign-in phases. */
  middleware: readonly RequestHandler[];
  routes: readonly ModuleRoutes[];
  static: readonly RawHandler[];
  /** `UseResponseComression`: compress what the routes answer. */
  compressRoutes: boolean;
  respondError: RespondError;
}

/**
 * Every route the host serves: its own (`/contractsync`) first, then the modules' in load order,
 * then the WebSocket paths, which answer an ordinary request 426 (docs/websocket.md).
 */
export function collectRoutes(hostRoutes: readonly ModuleRoutes[], modules: readonly LoadedModule[]): ModuleRoutes[] {
  return [
    ...hostRoutes,
    ...modules.flatMap((m) => (m.contributions.routes ?? []).map((r) => ({ ...r, capability: r.capability ?? m.id }))),
    ...upgradeRequiredRoutes(collectUpgrades(modules)).map((r) => ({ ...r, capability: 'websocket' })),
  ];
}

/** The modules' WebSocket offers, in load order. */
export function collectUpgrades(modules: readonly LoadedModule[]): ModuleUpgrade[] {
  return modules.flatMap((m) => m.contributions.upgrades ?? []);
}

/** The modules' handlers of one raw phase, in load order. */
export function collectRaw(modules: readonly LoadedModule[], phase: 'public' | 'static'): RawHandler[] {
  return modules.flatMap((m) => {
    // Named before the handler runs, so whatever it answers is counted under it (docs/operations.md).
    const capability: Capability = { route: m.contributions.capabilities?.[phase] ?? m.id };
    return (m.contributions[phase] ?? []).map((handler): RawHandler => (req, res, next) => {
      req.ack.answeredBy = capability;
      return handler(req, res, next);
    });
  });
}

/**
 * The host's entries into its one pipeline: HTTP/1.1 objects, HTTP/2 streams the raw phases answer
 * on the stream API, and HTTP/2 compatibility objects for the rest.
 */
export interface RequestHandlers {
  http1(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** Takes an HTTP/2 stream (true) or leaves it to `http2` (false): pipeline/http2-stream-lane.ts. */
  http2Stream?: Http2StreamEntry;
  http2(req: http2.Http2ServerRequest, res: AckHttp2Response): void;
  /** A request Node's HTTP/1.1 parser refused (`clientError`); unset leaves Node's own answer. */
  clientError?(err: Error, socket: Duplex): void;
}

/**
 * The request handlers the listeners call, one per protocol, over the same phases. Static
 * requests are answered in front of Express's router because they are most of a screen host's
 * traffic; no route prefix is ever served by a static handler, so the outcome is the one the phase
 * order defines.
 */
export function createPipeline(phases: Phases): Pick<RequestHandlers, 'http1' | 'http2' | 'http2Stream'> {
  const { edge, respondError } = phases;
  const underRoute = routeMatcher(phases.routes);
  // One Express application per protocol over the same middleware and routers: HTTP/2 requests
  // need Express's methods on the HTTP/2 classes (pipeline/http2-adapter.ts, docs/protocols.md).
  const http1App = mountRoutes(createHttp1Express(), phases);
  const http2App = mountRoutes(createHttp2Express(), phases);
  const http1Phases = rawPhases(http1App, phases, underRoute);
  const http2Phases = rawPhases(http2App, phases, underRoute);

  const onRequest = (
    req: AckRequest,
    res: http.ServerResponse,
    list: readonly PhaseHandler<AckRequest, http.ServerResponse>[],
  ) => {
    try {
      edge.begin(req);
    } catch (err) {
      return respondError(err, req, res);
    }
    edge.run(list, req, res, sendNotFound, respondError);
  };

  return {
    http1: (req, res) => onRequest(req as AckRequest, res, http1Phases),
    // HTTP/2 GET/HEAD outside the route mounts: the raw phases on the stream API, no Express.
    http2Stream:
      phases.static.length > 0
        ? createHttp2StreamLane({
            edge,
            phases: [...edge.handlers, ...phases.public, ...phases.static],
            underRoute,
            respondError,
          })
        : undefined,
    http2: (request, response) => {
      const { req, res } = adaptHttp2(http2App, request, response);
      // HTTP/1.1 gets this 431 from Node's parser; HTTP/2 from here (pipeline/http2-adapter.ts).
      if (headerListBytes(request.rawHeaders) > MAX_HEADER_BYTES) {
        return sendProblem(
          res,
          {
            status: 431,
            code: hostProblems.REQUEST_HEADERS_TOO_LARGE.code,
            detail: `The request headers are over ${MAX_HEADER_BYTES} bytes.`,
          },
          req.method,
        );
      }
      onRequest(req, res, http2Phases);
    },
  };
}

/** The Express phases on one application: compression, session, sign-in, routes, not found, errors. */
function mountRoutes(expressApp: Express, phases: Phases): Express {
  expressApp.disable('x-powered-by');
  expressApp.set('etag', false);
  // Express (and express-session's `secure: 'auto'`) trusts X-Forwarded-Proto from exactly the
  // proxies the edge trusts, so a session cookie is Secure when the client came over HTTPS.
  expressApp.set('trust proxy', (address: string) => phases.edge.trustsProxy(address));
  // `UseResponseComression` compresses what the routes answer; files are compressed once by the
  // module that serves them (docs/static-files.md), so the lean phases never pay for it.
  if (phases.compressRoutes) expressApp.use(compression());
  for (const middleware of phases.middleware) expressApp.use(middleware);
  for (const route of phases.routes) {
    const mount = route.mount.replace(/\/+$/, '');
    const capability: Capability = {
      route: route.capability ?? 'route',
      // The original counts API requests (a path with `/api/`) by route; the mount stands for it here.
      ...(/\/api(\/|$)/i.test(mount) ? { apiPath: mount } : {}),
    };
    expressApp.use(route.mount, (req, res, next) => {
      req.ack.answeredBy = capability;
      route.handler(req, res, next);
    });
  }
  expressApp.use((req, res) => sendNotFound(req, res));
  expressApp.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    phases.respondError(err, req, res);
  });
  return expressApp;
}

/**
 * The raw phases as one list per Express application, run by one runner (docs/pipeline.md):
 * edge, public, then static for a GET or HEAD outside every route mount; the rest goes to Express.
 */
function rawPhases(
  expressApp: Express,
  phases: Phases,
  underRoute: (folded: string) => boolean,
): PhaseHandler<AckRequest, http.ServerResponse>[] {
  const hasStatic = phases.static.length > 0;
  return [
    ...phases.edge.handlers,
    ...phases.public,
    (req, res, next) => {
      // Outside every route prefix Express holds nothing for a GET/HEAD but the 404 (session and
      // sign-in only read cookies): static answers it, without minting a session for every miss.
      if ((req.method === 'GET' || req.method === 'HEAD') && hasStatic && !underRoute(req.ack.path.folded))
        return next();
      handToExpress(expressApp, req, res);
    },
    ...phases.static,
  ];
}

/** Whether a decoded, folded path is under a route mount: Express answers it, never a static handler. */
function routeMatcher(routes: readonly ModuleRoutes[]): (folded: string) => boolean {
  const routePrefixes = routes.map((r) => r.mount.replace(/\/+$/, '').toLowerCase());
  return (p) => routePrefixes.some((prefix) => p === prefix || p.startsWith(prefix + '/'));
}

/** A plain request (no `Upgrade`) at a socket's path: 426, naming the protocol to upgrade to. */
export function upgradeRequiredRoutes(upgrades: readonly ModuleUpgrade[]): ModuleRoutes[] {
  return upgrades.map((u) => ({
    mount: u.path,
    handler: (req, res) =>
      sendProblem(
        res,
        {
          status: 426,
          code: hostProblems.WEBSOCKET_UPGRADE_REQUIRED.code,
          detail: 'This path is a WebSocket: open it with an Upgrade: websocket request.',
          headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
        },
        req.method,
      ),
  }));
}
