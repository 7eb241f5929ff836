import cors, { type CorsOptions } from 'cors';
import type { RawHandler } from '../../modules/contract.js';
import { oweEdgeHeaders } from '../../http/response-head/response.js';

/** Every answer depends on the request's Origin, so a shared cache must key on it. */
const VARY_ORIGIN = [['Vary', 'Origin']] as const;

/**
 * CORS (docs/pipeline.md "Edge details"): origins in `WithOrigins` (a `*` in the host part matches sub-domains) get
 * credentialed CORS; when `EnablePublicCorsPolicy`, any other origin gets public CORS (`*`, no
 * credentials). Request headers are reflected in preflights, so JSON bodies and custom headers such
 * as `AuthorizationKey` pass (the original's header list blocked them).
 */
export function originMatcher(withOrigins: readonly string[]): (origin: string) => boolean {
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const raw of withOrigins) {
    const o = raw.trim().replace(/\/+$/, '').toLowerCase();
    if (o === '') continue;
    if (o.includes('*')) {
      const escaped = o
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[a-z0-9-]+(?:\\.[a-z0-9-]+)*');
      patterns.push(new RegExp(`^${escaped}$`));
    } else exact.add(o);
  }
  return (origin) => {
    const o = origin.toLowerCase();
    return exact.has(o) || patterns.some((p) => p.test(o));
  };
}

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
