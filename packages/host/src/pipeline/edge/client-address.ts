import net from 'node:net';
import os from 'node:os';

/**
 * Who the client is (docs/pipeline.md "Edge details"). The socket address, unless the socket peer is a trusted
 * proxy (`ForwardProxyIP`, plus this machine's own addresses when `UseSameIPProxy`) and
 * `UseForwardProxy` is on: then the right-most untrusted entry of `X-Forwarded-For`. An
 * `X-Forwarded-For` from anyone else is ignored, so the allow-list and logs cannot be spoofed.
 */
export interface ForwardedPolicy {
  enabled: boolean;
  trusted: ReadonlySet<string>;
}

export function normalizeIp(ip: string | undefined): string {
  if (!ip) return '';
  let v = ip.trim();
  if (v.startsWith('[') && v.includes(']')) v = v.slice(1, v.indexOf(']'));
  if (v.toLowerCase().startsWith('::ffff:') && net.isIPv4(v.slice(7))) v = v.slice(7);
  return v.toLowerCase();
}

export function localAddresses(): string[] {
  const out = ['127.0.0.1', '::1'];
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) out.push(normalizeIp(a.address));
  }
  return out;
}

export function createForwardedPolicy(
  useForwardProxy: boolean,
  proxies: readonly string[],
  useSameIpProxy: boolean,
): ForwardedPolicy {
  const trusted = new Set(proxies.map((p) => normalizeIp(p.split(',')[0])).filter(Boolean));
  if (useSameIpProxy) for (const a of localAddresses()) trusted.add(a);
  return { enabled: useForwardProxy && trusted.size > 0, trusted };
}

/** The client address and scheme after the forwarded-headers rule. */
export function resolveClient(
  policy: ForwardedPolicy,
  socketAddress: string | undefined,
  encrypted: boolean,
  forwardedFor: string | string[] | undefined,
  forwardedProto: string | string[] | undefined,
): { ip: string; protocol: 'http' | 'https' } {
  const peer = normalizeIp(socketAddress);
  let protocol: 'http' | 'https' = encrypted ? 'https' : 'http';
  if (!policy.enabled || !policy.trusted.has(peer) || forwardedFor === undefined) return { ip: peer, protocol };
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => normalizeIp(h))
    .filter(Boolean);
  let ip = peer;
  // Walk from the nearest hop back; stop at the first address that is not a trusted proxy.
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = hops[i]!;
    if (!policy.trusted.has(ip)) break;
  }
  if (net.isIP(ip) === 0) ip = peer;
  const proto = (Array.isArray(forwardedProto) ? forwardedProto[0] : forwardedProto)
    ?.split(',')[0]
    ?.trim()
    .toLowerCase();
  if (proto === 'https' || proto === 'http') protocol = proto;
  return { ip, protocol };
}
