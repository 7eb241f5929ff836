import { describe, expect, it } from 'vitest';
import { parseRequestPath } from './request-path.js';

describe('parseRequestPath', () => {
  it('decodes each segment once, drops empty ones and folds case for matching', () => {
    expect(parseRequestPath('/A//b%20C/')).toEqual({
      segments: ['A', 'b C'],
      folded: '/a/b c',
      trailingSlash: true,
      wellFormed: true,
    });
    expect(parseRequestPath('/')).toEqual({ segments: [], folded: '/', trailingSlash: false, wellFormed: true });
    expect(parseRequestPath('/%252e/x').segments).toEqual(['%2e', 'x']);
  });
  it('keeps a decoded separator inside its segment, and flags malformed encoding', () => {
    expect(parseRequestPath('/a%2Fb')).toMatchObject({ segments: ['a/b'], folded: '/a%2fb' });
    expect(parseRequestPath('/%c0%ae/x').wellFormed).toBe(false);
  });
});
