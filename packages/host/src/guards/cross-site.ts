import type { RequestHandler } from 'express';
import { sendProblem } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { originMatcher } from './origin-match.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request refusal for routes a cookie authorises (docs/pipeline.md "Cross-site
 * requests"): a state-changing request (not GET, HEAD or OPTIONS) that a browser marks as coming
 * from another site gets 403. A browser says so with `Sec-Fetch-Site` (`same-origin` and `none`
 * pass) or, where it does not send that, with `Origin` (this host's own origin passes). Origins
 * listed in `WithOrigins` are trusted, as for CORS. A request with neither header is not from a
 * browser page (curl, a server, a sync client) and passes: no cookie of a victim rides on it.
 */
export function createCrossSiteGuard(withOrigins: readonly string[]): RequestHandler {
  const isListed = originMatcher(withOrigins);
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const site = req.headers['sec-fetch-site'];
    if (site === 'same-origin' || site === 'none') return next();
    const origin = req.headers.origin;
    if (site === undefined && origin === undefined) return next();
    if (origin !== undefined && origin !== 'null') {
      // The scheme the edge resolved (X-Forwarded-Proto from trusted proxies only).
      const own = `${req.ack.protocol}://${req.headers.host ?? ''}`.toLowerCase();
      if (origin.toLowerCase() === own || isListed(origin)) return next();
    }
    sendProblem(
      res,
      {
        status: 403,
        code: hostProblems.REQUEST_CROSS_SITE.code,
        detail: 'A state-changing request from another site is refused: send it from a page of this host.',
      },
      req.method,
    );
  };
}
