/**
 * `AllowedHosts` (ASP.NET's key, docs/pipeline.md "Host header"): `;`-separated host names the
 * `Host` header may carry, without port, compared ignoring case; `*.example.com` allows every
 * sub-domain of example.com (not example.com itself); `*` (the default) allows every host. A list
 * of names defeats DNS rebinding: a page on another site that resolves its own name to 127.0.0.1
 * still sends its own name as the Host.
 */
export interface HostFilter {
  /** True when every host is allowed (no per-request work). */
  open: boolean;
  allows(hostHeader: string | undefined): boolean;
}

export function createHostFilter(allowedHosts: string): HostFilter {
  const entries = allowedHosts
    .split(';')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (entries.length === 0 || entries.includes('*')) return { open: true, allows: () => true };
  const exact = new Set(entries.filter((e) => !e.startsWith('*.')));
  const suffixes = entries.filter((e) => e.startsWith('*.')).map((e) => e.slice(1));
  return {
    open: false,
    allows(hostHeader) {
      // HTTP/1.0 may send no Host at all; Node refuses a missing Host on HTTP/1.1 itself.
      if (hostHeader === undefined || hostHeader === '') return true;
      const host = hostName(hostHeader).toLowerCase();
      return exact.has(host) || suffixes.some((s) => host.endsWith(s) && host.length > s.length);
    },
  };
}

/** The Host header without its port (`[::1]:80` → `[::1]`, `a.example:8421` → `a.example`). */
export function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) {
    const end = hostHeader.indexOf(']');
    return end === -1 ? hostHeader : hostHeader.slice(0, end + 1);
  }
  const colon = hostHeader.indexOf(':');
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}
