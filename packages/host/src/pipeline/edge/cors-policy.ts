import cors, { type CorsOptions } from 'cors';
import type { RawHandler } from '../../http/exchange.js';
import { oweEdgeHeaders } from '../../http/response-head/response.js';
import { originMatcher } from '../../guards/origin-match.js';

/** Every answer depends on the request's Origin, so a shared cache must key on it. */
const VARY_ORIGIN = [['Vary', 'Origin']] as const;

/**
 * CORS (docs/pipeline.md "Edge details"): origins in `WithOrigins` (a `*` in the host part matches sub-domains) get
 * credentialed CORS; when `EnablePublicCorsPolicy`, any other origin gets public CORS (`*`, no
 * credentials). Request headers are reflected in preflights, so JSON bodies and custom headers such
 * as `AuthorizationKey` pass (the original's header list blocked them).
 */
export function createCorsHandler(withOrigins: readonly string[], publicPolicy: boolean): RawHandler {
  const isListed = originMatcher(withOrigins);
  const common: CorsOptions = { methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'], maxAge: 86_400 };
  const credentialed = cors({ ...common, origin: true, credentials: true });
  const publicCors = cors({ ...common, origin: '*', credentials: false });
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) {
      oweEdgeHeaders(res, VARY_ORIGIN);
      return next();
    }
    if (isListed(origin)) return credentialed(req, res, next);
    if (publicPolicy) return publicCors(req, res, next);
    oweEdgeHeaders(res, VARY_ORIGIN);
    // Not allowed: no CORS headers, so the browser refuses; a preflight ends here.
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.statusCode = 403;
      res.setHeader('Content-Length', 0);
      res.end();
      return;
    }
    next();
  };
}
