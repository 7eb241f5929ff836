import { originMatcher } from '../guards/origin-match.js';
import type { Problem } from '../http/problem.js';
import { hostProblems, type ProblemCode } from '../http/problem-codes.js';

/**
 * The host's rules for a WebSocket upgrade (docs/websocket.md), as a pure decision so that every
 * listener applies the same ones in the same order: path, client address, origin, capacity.
 */
export interface UpgradeFacts {
  /** Lower-cased path without the query string. */
  path: string;
  clientIp: string;
  /** Scheme the client used (after the forwarded-headers rule). */
  protocol: 'http' | 'https';
  origin: string | undefined;
  host: string | undefined;
  /** The `Upgrade` header. */
  upgrade: string | undefined;
}

export interface UpgradeRules {
  /** Paths some module offers a socket at (lower-cased). */
  paths: ReadonlySet<string>;
  ipAllowed(ip: string): boolean;
  /** `WithOrigins` (same matching as CORS: a `*` in the host part matches sub-domains). */
  withOrigins: readonly string[];
  /** `Kestrel:Limits:MaxConcurrentUpgradedConnections`; null for no limit. */
  maxUpgraded: number | null;
}

export type UpgradeVerdict = { ok: true } | { ok: false; problem: Problem };

export function createUpgradeDecider(
  rules: UpgradeRules,
): (facts: UpgradeFacts, open: number, closing: boolean) => UpgradeVerdict {
  const listed = originMatcher(rules.withOrigins);
  const refuse = (problem: ProblemCode & { status: number }, detail: string): UpgradeVerdict => ({
    ok: false,
    problem: { status: problem.status, code: problem.code, detail },
  });
  return (facts, open, closing) => {
    if (!rules.paths.has(facts.path))
      return refuse(hostProblems.WEBSOCKET_NOT_FOUND, 'No WebSocket is offered at this path.');
    if (facts.upgrade?.toLowerCase() !== 'websocket')
      return refuse(hostProblems.WEBSOCKET_BAD_UPGRADE, 'Only the websocket upgrade is supported.');
    if (!rules.ipAllowed(facts.clientIp))
      return refuse(hostProblems.HOST_IP_NOT_ALLOWED, 'This client address is not allowed.');
    if (
      facts.origin !== undefined &&
      !isSameOrigin(facts.origin, facts.host, facts.protocol) &&
      !listed(facts.origin)
    ) {
      // Cross-site WebSocket hijacking: a page on another site would ride this user's cookies.
      return refuse(
        hostProblems.WEBSOCKET_ORIGIN_NOT_ALLOWED,
        'This Origin may not open a WebSocket here (not this host and not in WithOrigins).',
      );
    }
    if (closing) return refuse(hostProblems.WEBSOCKET_SHUTTING_DOWN, 'The host is shutting down.');
    if (rules.maxUpgraded !== null && open >= rules.maxUpgraded) {
      return refuse(
        hostProblems.WEBSOCKET_TOO_MANY_CONNECTIONS,
        `The host holds its most WebSocket connections (${rules.maxUpgraded}); try again later.`,
      );
    }
    return { ok: true };
  };
}

/**
 * Same origin: the `Origin` names the host the request was sent to, with the scheme the client
 * used. Clients that are not browsers send no `Origin` and are not subject to this rule.
 */
export function isSameOrigin(origin: string, host: string | undefined, protocol: 'http' | 'https'): boolean {
  if (!host) return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  const defaultPort = protocol === 'https' ? '443' : '80';
  const [hostName, hostPort] = splitHost(host.toLowerCase());
  return (
    parsed.protocol === `${protocol}:` &&
    parsed.hostname === hostName &&
    (parsed.port || defaultPort) === (hostPort || defaultPort)
  );
}

function splitHost(host: string): [string, string] {
  // `[::1]:8421`, `example.org:8421`, `example.org`
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  return m ? [m[1]!, m[2] ?? ''] : [host, ''];
}
