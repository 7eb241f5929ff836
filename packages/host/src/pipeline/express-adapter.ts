import http from 'node:http';
import http2 from 'node:http2';
import cookieParser from 'cookie-parser';
import express, { type Express, type RequestHandler } from 'express';
import { AckServerResponse } from '../http/response-head/response.js';
import { AckHttp2Response } from './http2-adapter.js';

/*
 * The one boundary between Node's request and Express's (docs/architecture.md "The Express
 * boundary"). The raw phases run on Node's objects; a request crosses into Express only by being
 * handed to an Express application, which puts Express's prototypes on the very same objects
 * (`app.handle`). So nothing here or elsewhere casts a Node request to Express's type: the
 * application's own call signature takes Node's objects.
 *
 * One Express application object per protocol over the same middleware and routers
 * (docs/protocols.md): Express swaps each request's and response's prototype for its own, so its
 * prototypes must sit on top of the host's classes, not Node's.
 */

/**
 * An Express application object for HTTP/2 requests: the caller mounts the same middleware and
 * routers on it as on the HTTP/1 one.
 */
export function createHttp2Express(): Express {
  return expressOver(http2.Http2ServerRequest.prototype, AckHttp2Response.prototype);
}

/**
 * The Express application object for HTTP/1.1 requests: Express's response methods over the
 * host's own response class, whose `writeHead` adds the headers the edge held back
 * (docs/pipeline.md "Response heads"); plain `express()` would swap it for Node's.
 */
export function createHttp1Express(): Express {
  return expressOver(http.IncomingMessage.prototype, AckServerResponse.prototype);
}

/** Hands a raw request to Express: from here on the objects are Express's `Request` and `Response`. */
export function handToExpress(app: Express, req: http.IncomingMessage, res: http.ServerResponse): void {
  app(req, res);
}

/**
 * Runs Express middleware on a request no route will answer (a WebSocket upgrade: the session and
 * sign-in phases, so its handler sees the same user as routes), through an Express application of
 * its own. `done` runs when every middleware passed, or with the error one passed on.
 */
export function createMiddlewareRunner(
  middleware: readonly RequestHandler[],
): (req: http.IncomingMessage, res: http.ServerResponse, done: (err?: unknown) => void) => void {
  const app = createHttp1Express();
  app.disable('x-powered-by');
  // The request object is the key: Express changes its prototype, never its identity.
  const pending = new WeakMap<object, (err?: unknown) => void>();
  const finish = (req: object, err?: unknown) => {
    const done = pending.get(req);
    pending.delete(req);
    done?.(err);
  };
  for (const handler of middleware) app.use(handler);
  app.use((req, _res) => finish(req));
  app.use((err: unknown, req: express.Request, _res: express.Response, _next: express.NextFunction) => {
    finish(req, err);
  });
  return (req, res, done) => {
    pending.set(req, done);
    handToExpress(app, req, res);
  };
}

/** An Express application whose request and response prototypes put Express's methods over these. */
function expressOver(requestPrototype: object, responsePrototype: object): Express {
  const app = express();
  const request: object = Object.create(requestPrototype, Object.getOwnPropertyDescriptors(express.request));
  Object.defineProperty(request, 'cookies', cookiesWhenRead);
  const response: object = Object.create(responsePrototype, Object.getOwnPropertyDescriptors(express.response));
  const own = { app: { configurable: true, enumerable: true, writable: true, value: app } };
  app.request = Object.create(request, own);
  app.response = Object.create(response, own);
  return app;
}

const parseCookies = cookieParser();
const settleCookies = (req: object, value: unknown) =>
  Object.defineProperty(req, 'cookies', { value, writable: true, configurable: true, enumerable: true });

/**
 * `req.cookies` for modules, parsed by cookie-parser the first time a request's is read: most
 * requests never read it, and a signed-in browser sends large cookies (the sign-in phase reads the
 * authentication cookie alone, keys/cookie-value.ts). Set on the request prototypes once, so
 * that nothing is done per request until a module asks.
 */
const cookiesWhenRead: PropertyDescriptor = {
  configurable: true,
  enumerable: true,
  get(this: express.Request) {
    settleCookies(this, undefined);
    // Synchronous: cookie-parser calls back at once, and never with an error.
    void parseCookies(this, this.res!, () => {});
    // cookie-parser turns a `j:` value into a parsed JSON object; this host never issues one and
    // every reader expects text, so such a cookie is dropped rather than reaching a module as an object.
    const cookies = (this.cookies ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(cookies)) if (typeof cookies[name] !== 'string') delete cookies[name];
    return cookies;
  },
  set(this: express.Request, value: unknown) {
    settleCookies(this, value);
  },
};
