/**
 * The origins of `WithOrigins` as one test (docs/pipeline.md "Edge details"): a `*` in the host part
 * matches sub-domains. One matcher for CORS, the cross-site guard and WebSocket origins.
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
