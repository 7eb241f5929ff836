import { createHash } from 'node:crypto';
import { safeEqual } from '../keys/safe-equal.js';

export type HostAccessVerdict = 'ok' | 'missing' | 'invalid' | 'not_configured';

/**
 * Placeholder keys shipped in settings files (this host's default and the original's). They are
 * public knowledge, so a host still carrying one refuses contract sync as if no key were set.
 */
export const PLACEHOLDER_HOST_ACCESS_IDS: ReadonlySet<string> = new Set(['ACK_HOSTACCESSID', 'HANDSTACK_HOSTACCESSID']);

/**
 * The `hostAccessID` rule (docs/sync.md, docs/compatibility.md): the presented header must equal
 * `AppSettings:HostAccessID` or the lowercase hex SHA-256 of it (what the original host's clients
 * send). Compared in constant time (`safeEqual`, both forms always); an empty or placeholder setting refuses
 * everyone.
 */
export function checkHostAccessID(configured: string, presented: string | string[] | undefined): HostAccessVerdict {
  const expected = configured.trim();
  if (expected === '' || PLACEHOLDER_HOST_ACCESS_IDS.has(expected)) return 'not_configured';
  const value = (Array.isArray(presented) ? presented[0] : presented)?.trim() ?? '';
  if (value === '') return 'missing';
  const plain = safeEqual(value, expected);
  const hashed = safeEqual(value, createHash('sha256').update(expected, 'utf8').digest('hex'));
  return plain || hashed ? 'ok' : 'invalid';
}
