import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet, { type HelmetOptions } from 'helmet';
import type { SecuritySettings } from '../../settings/schema.js';
import type { HeaderPairs } from '../../http/response-head/prepared-head.js';

/**
 * Security headers (`EnableSecurityHeaders`, `IsEnabledCSP`), computed once at start with helmet
 * and replayed on every response: helmet's headers do not depend on the request, so the hot path
 * pays for a few `setHeader` calls, not for helmet's middleware chain.
 */
export function computeSecurityHeaders(
  security: SecuritySettings,
  enableCsp: boolean,
  csp?: string,
  secure = true,
): HeaderPairs {
  if (!security.EnableSecurityHeaders) return enableCsp && csp ? [['Content-Security-Policy', csp]] : [];
  const options: HelmetOptions = {
    contentSecurityPolicy:
      enableCsp && !csp ? { useDefaults: true, directives: secure ? {} : { upgradeInsecureRequests: null } } : false,
    frameguard:
      security.XFrameOptions === 'ALLOW'
        ? false
        : { action: security.XFrameOptions === 'DENY' ? 'deny' : 'sameorigin' },
    referrerPolicy: { policy: 'no-referrer' },
    // Screens load shared scripts and styles from other hosts of the same team: keep COEP off.
    crossOriginEmbedderPolicy: false,
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    strictTransportSecurity: false,
    // Headers for browsers long gone (IE's download/XSS filters, Flash policies, DNS prefetch,
    // origin-agent clusters) cost every response and protect no current browser: off.
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  };
  // helmet answers synchronously and only writes headers: run it once on a response that is never
  // sent and record what it set, with helmet's spelling of the names.
  const probe = new HeaderRecorder(new IncomingMessage(new Socket()));
  helmet(options)(probe.req, probe, () => {});
  const headers = probe.recorded;
  if (enableCsp && csp) headers.push(['Content-Security-Policy', csp]);
  return headers;
}

class HeaderRecorder extends ServerResponse {
  readonly recorded: Array<[string, string]> = [];

  override setHeader(name: string, value: string | number | readonly string[]): this {
    this.recorded.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
    return super.setHeader(name, value);
  }
}
