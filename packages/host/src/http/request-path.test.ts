import { describe, expect, it } from 'vitest';
import { foldExactly, parseRequestPath } from './request-path.js';

describe('parseRequestPath', () => {
  it('decodes each segment once, drops empty ones and folds case for matching', () => {
    expect(parseRequestPath('/A//b%20C/')).toEqual({
      segments: ['A', 'b C'],
      folded: '/a/b c',
      trailingSlash: true,
      emptySegments: true,
      wellFormed: true,
    });
    expect(parseRequestPath('/')).toEqual({
      segments: [],
      folded: '/',
      trailingSlash: false,
      emptySegments: false,
      wellFormed: true,
    });
    expect(parseRequestPath('/%252e/x').segments).toEqual(['%2e', 'x']);
  });
  it('gives a path with nothing to decode the same result as the general rule', () => {
    expect(parseRequestPath('/Screens/App.JS/')).toEqual({
      segments: ['Screens', 'App.JS'],
      folded: '/screens/app.js',
      trailingSlash: true,
      emptySegments: false,
      wellFormed: true,
    });
    expect(parseRequestPath('/a/./B')).toEqual({
      segments: ['a', '.', 'B'],
      folded: '/a/./b',
      trailingSlash: false,
      emptySegments: false,
      wellFormed: true,
    });
    for (const plain of ['/x', '/X/', '/a b/C.txt', '/é/Ü']) {
      const encoded = plain
        .split('/')
        .map((s) => encodeURIComponent(s))
        .join('/');
      // A leading `//` sends the encoded form through the general rule.
      const general = parseRequestPath(encoded.replace(/^\//, '//'));
      expect(parseRequestPath(plain), plain).toEqual({ ...general, emptySegments: false });
    }
  });
  it('keeps the exact form, empty segments included, for the matches that must be exact', () => {
    expect(foldExactly('/Shared/Two//Slashes.TXT')).toBe('/shared/two//slashes.txt');
    expect(foldExactly('/a%2Fb//C%20d')).toBe('/a%2fb//c d');
    expect(parseRequestPath('/a//b').emptySegments).toBe(true);
    expect(parseRequestPath('/a/b/').emptySegments).toBe(false);
  });
  it('keeps a decoded separator inside its segment, and flags malformed encoding', () => {
    expect(parseRequestPath('/a%2Fb')).toMatchObject({ segments: ['a/b'], folded: '/a%2fb' });
    expect(parseRequestPath('/%c0%ae/x').wellFormed).toBe(false);
  });
});
