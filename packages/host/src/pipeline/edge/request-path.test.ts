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
  it('gives a path with nothing to decode the same result as the general rule', () => {
    expect(parseRequestPath('/Screens/App.JS/')).toEqual({
      segments: ['Screens', 'App.JS'],
      folded: '/screens/app.js',
      trailingSlash: true,
      wellFormed: true,
    });
    expect(parseRequestPath('/a/./B')).toEqual({
      segments: ['a', '.', 'B'],
      folded: '/a/./b',
      trailingSlash: false,
      wellFormed: true,
    });
    for (const plain of ['/x', '/X/', '/a b/C.txt', '/é/Ü']) {
      const encoded = plain
        .split('/')
        .map((s) => encodeURIComponent(s))
        .join('/');
      // A leading `//` sends the encoded form through the general rule.
      expect(parseRequestPath(plain), plain).toEqual(parseRequestPath(encoded.replace(/^\//, '//')));
    }
  });
  it('keeps a decoded separator inside its segment, and flags malformed encoding', () => {
    expect(parseRequestPath('/a%2Fb')).toMatchObject({ segments: ['a/b'], folded: '/a%2fb' });
    expect(parseRequestPath('/%c0%ae/x').wellFormed).toBe(false);
  });
});
