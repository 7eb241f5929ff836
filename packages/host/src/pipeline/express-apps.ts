import http from 'node:http';
import http2 from 'node:http2';
import express, { type Express } from 'express';
import { AckServerResponse } from '../http/response-head/response.js';
import { AckHttp2Response } from './http2-adapter.js';

/*
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

/** An Express application whose request and response prototypes put Express's methods over these. */
function expressOver(requestPrototype: object, responsePrototype: object): Express {
  const app = express();
  const request: object = Object.create(requestPrototype, Object.getOwnPropertyDescriptors(express.request));
  const response: object = Object.create(responsePrototype, Object.getOwnPropertyDescriptors(express.response));
  const own = { app: { configurable: true, enumerable: true, writable: true, value: app } };
  app.request = Object.create(request, own);
  app.response = Object.create(response, own);
  return app;
}
