import { normalizeIp } from './client-address.js';

/**
 * `WithOnlyIPs`: empty allows everyone; `*` allows everyone (and start-up warns when
 * `WarnOnWildcardAllowClientIP`); otherwise only the listed addresses. Entries may carry text after
 * a comma (the original's format); it is ignored.
 */
export interface IpAllowList {
  readonly open: boolean;
  readonly wildcard: boolean;
  allows(ip: string): boolean;
}

export function createIpAllowList(entries: readonly string[]): IpAllowList {
  const list = entries.map((e) => normalizeIp(e.split(',')[0])).filter(Boolean);
  const wildcard = list.includes('*');
  const open = list.length === 0 || wildcard;
  const set = new Set(list);
  return { open, wildcard, allows: (ip) => open || set.has(normalizeIp(ip)) };
}
