import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();

/**
 * The one constant-time comparison of secrets (tokens, keys, MACs). Both sides are hashed to
 * equal-length digests first, so neither the content nor the length of the expected value leaks
 * through timing, and values of different lengths need no early return. Strings compare as UTF-8.
 */
export function safeEqual(given: string | Buffer, expected: string | Buffer): boolean {
  const a = typeof given === 'string' ? Buffer.from(given, 'utf8') : given;
  const b = typeof expected === 'string' ? Buffer.from(expected, 'utf8') : expected;
  return timingSafeEqual(digest(a), digest(b)) && a.length === b.length;
}
