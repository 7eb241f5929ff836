import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { RawHandler } from '../modules/contract.js';

/**
 * The one boundary between Node's request and Express's. The raw phases (edge, public, static)
 * run on Node's `IncomingMessage`; Express middleware expects its own `Request`/`Response`, whose
 * extra members Express adds to the very same objects when its app first sees them. Middleware
 * that runs on a raw request must read only Node's members, so handing it the raw objects is
 * sound; this is the one place that says so. (Compression runs in the Express phase, in front of
 * the routes only: docs/pipeline.md.)
 */
export function asExpress(req: IncomingMessage, res: ServerResponse): { req: Request; res: Response } {
  return { req: req as Request, res: res as Response };
}

/** Runs an Express middleware as a raw handler (see `asExpress`). */
export function rawFromExpress(handler: RequestHandler): RawHandler {
  return (req, res, next) => {
    const e = asExpress(req, res);
    handler(e.req, e.res, next);
  };
}
