import type { IncomingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { RawHandler, RawRequest, RawResponse } from '../http/exchange.js';
import type { Edge } from './edge/index.js';
import { sendNotFound } from './errors.js';
import { headerListBytes, MAX_HEADER_BYTES } from './http2-adapter.js';
import { Http2StreamRequest, Http2StreamResponse } from './http2-stream.js';

/** The listeners' entry for an HTTP/2 stream: true when it took the stream, false to leave it to the compatibility path. */
export type Http2StreamEntry = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  rawHeaders: string[],
) => boolean;

export interface Http2StreamLaneOptions {
  edge: Pick<Edge, 'begin' | 'run'>;
  /** The raw phases with nothing for Express among them: edge handlers, public, static. */
  phases: readonly RawHandler[];
  /** Whether a decoded, folded path is under a route mount (Express answers it). */
  underRoute(folded: string): boolean;
  respondError(err: unknown, req: RawRequest, res: RawResponse): void;
}

// A stream error (the client reset it) ends the stream; nothing is owed to anyone, as on the
// compatibility path, which ignores them the same way.
const ignore = () => {};

/**
 * HTTP/2 static answers on the stream API (docs/pipeline.md "One exchange, two protocols"): a GET
 * or HEAD without a body, outside every route mount, runs the raw phases (edge, public, static,
 * then the 404) on an `Http2StreamRequest`/`Http2StreamResponse` pair, exactly the phases the
 * HTTP/1.1 and compatibility paths run for it, so headers, validators and access lines are the
 * same. Anything else (a body, another method, a route, an `Expect`, a header list over the
 * limit, which the compatibility path answers 431) goes to Node's compatibility objects and Express.
 */
export function createHttp2StreamLane(options: Http2StreamLaneOptions): Http2StreamEntry {
  const { edge, phases, underRoute, respondError } = options;
  return (stream, headers, rawHeaders) => {
    const method = headers[':method'];
    if (
      (method !== 'GET' && method !== 'HEAD') ||
      !stream.endAfterHeaders ||
      headers.expect !== undefined ||
      headerListBytes(rawHeaders) > MAX_HEADER_BYTES
    )
      return false;
    const req = new Http2StreamRequest(stream, headers, rawHeaders);
    try {
      edge.begin(req);
    } catch {
      return false;
    }
    // The route check needs the path as the edge decoded it; a route's request starts again on
    // the compatibility path (a new request id, the same headers).
    if (underRoute(req.ack.path.folded)) return false;
    stream.on('error', ignore);
    edge.run(phases, req, new Http2StreamResponse(stream), sendNotFound, respondError);
    return true;
  };
}
