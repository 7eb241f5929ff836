import { describe, expect, it } from 'vitest';
import { EdgeHeaders, PreparedHead, joinHeaders, mergeVary } from './prepared-head.js';

describe('prepared response heads', () => {
  const security = [
    ['X-Frame-Options', 'SAMEORIGIN'],
    ['X-Content-Type-Options', 'nosniff'],
  ] as const;
  const varyOrigin = [['Vary', 'Origin']] as const;

  it("joins the edge's headers and a responder's into one flat list, the responder's value winning", () => {
    const edge = EdgeHeaders.NONE.plus(security).plus(varyOrigin);
    const head = new PreparedHead([
      ['Content-Type', 'text/plain'],
      ['x-frame-options', 'DENY'],
      ['Vary', 'Accept-Encoding'],
    ]);
    expect(head.flatWith(edge)).toEqual([
      'X-Frame-Options',
      'DENY',
      'X-Content-Type-Options',
      'nosniff',
      'Vary',
      'Origin, Accept-Encoding',
      'Content-Type',
      'text/plain',
    ]);
    expect(head.flatWith(undefined)).toEqual(head.pairs.flat());
  });

  it('makes each edge variant once and each join once, so a request only looks them up', () => {
    const a = EdgeHeaders.NONE.plus(security).plus(varyOrigin);
    const b = EdgeHeaders.NONE.plus(security).plus(varyOrigin);
    expect(a).toBe(b);
    const head = new PreparedHead([['Content-Length', '3']]);
    expect(head.flatWith(a)).toBe(head.flatWith(b));
  });

  it('stays bounded when a caller passes a new list every time', () => {
    const head = new PreparedHead([['Content-Length', '3']]);
    for (let i = 0; i < 1000; i++) {
      const edge = EdgeHeaders.NONE.plus([['X-N', String(i)]]);
      expect(head.flatWith(edge)).toEqual(['X-N', String(i), 'Content-Length', '3']);
    }
    // Only the first few variants were remembered: a later one is joined again, not found.
    const late = EdgeHeaders.NONE.plus([['X-N', 'late']]);
    expect(head.flatWith(late)).not.toBe(head.flatWith(late));
  });

  it("keeps for a 304 only the edge's headers RFC 9110 lists for it, one object per variant", () => {
    const edge = EdgeHeaders.NONE.plus(security).plus(varyOrigin);
    expect(edge.forStatus(304).pairs).toEqual([['Vary', 'Origin']]);
    expect(edge.forStatus(304)).toBe(edge.notModified);
    // Its neighbours keep all: a 200, a 404, a 412.
    for (const status of [200, 404, 412]) expect(edge.forStatus(status)).toBe(edge);
    const head = new PreparedHead([['ETag', '"1"']]);
    expect(head.fieldsWith(edge.forStatus(304), 304)).toEqual({ ':status': 304, vary: 'Origin', etag: '"1"' });
  });

  it('merges Vary lists case-insensitively, each name once, * absorbing the rest', () => {
    expect(mergeVary('Origin', 'origin, Accept-Encoding')).toBe('Origin, Accept-Encoding');
    expect(mergeVary('Origin', '*')).toBe('*');
    expect(mergeVary('', 'Accept')).toBe('Accept');
    expect(joinHeaders([['vary', 'Origin']], [['Vary', 'Accept']])).toEqual([['vary', 'Origin, Accept']]);
  });
});
