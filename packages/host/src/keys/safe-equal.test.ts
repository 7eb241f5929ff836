import { describe, expect, it } from 'vitest';
import { safeEqual } from './safe-equal.js';

describe('safeEqual', () => {
  it('is true only for the same bytes', () => {
    expect(safeEqual('team-token-1', 'team-token-1')).toBe(true);
    expect(safeEqual(Buffer.from([0, 1, 255]), Buffer.from([0, 1, 255]))).toBe(true);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('team-token-1', 'team-token-2')).toBe(false);
    expect(safeEqual('team-token-1', 'TEAM-TOKEN-1')).toBe(false);
  });

  it('is false for values of different lengths, a prefix included', () => {
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('abcd', 'abc')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
  });

  it('compares strings as UTF-8 and agrees with a Buffer of those bytes', () => {
    expect(safeEqual('clé', Buffer.from('clé', 'utf8'))).toBe(true);
    expect(safeEqual('clé', Buffer.from('clé', 'latin1'))).toBe(false);
  });
});
