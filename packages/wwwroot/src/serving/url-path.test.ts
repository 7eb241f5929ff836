import { describe, expect, it } from 'vitest';
import { decodeUrlPath, encodeUrlPath } from './url-path.js';
import { notModified } from './conditional.js';
import { cacheHeaders, isLoaderFile } from './cache-policy.js';

describe('decodeUrlPath', () => {
  it('decodes each segment once and skips empty ones', () => {
    expect(decodeUrlPath('/a//b%20c/')).toEqual({ ok: true, segments: ['a', 'b c'], trailingSlash: true });
    expect(decodeUrlPath('/%252e%252e/x')).toMatchObject({ ok: true, segments: ['%2e%2e', 'x'] });
    expect(decodeUrlPath('/')).toEqual({ ok: true, segments: [], trailingSlash: false });
  });

  it('refuses what could leave the folder with 400, dotfiles with 404', () => {
    for (const p of [
      '/..',
      '/a/../b',
      '/%2e%2e/x',
      '/.%2E/x',
      '/a%2fb',
      '/a%5cb',
      '/a\\b',
      '/a%00',
      '/C:/x',
      '/%c0%ae',
    ]) {
      expect(decodeUrlPath(p), p).toMatchObject({ ok: false, status: 400 });
    }
    for (const p of ['/.env', '/a/.git/config', '/a/.well-known/x'])
      expect(decodeUrlPath(p), p).toMatchObject({ ok: false, status: 404 });
    expect(decodeUrlPath('/.well-known/x')).toMatchObject({ ok: true });
    expect(decodeUrlPath('/.Well-Known/x')).toMatchObject({ ok: true });
  });

  it('encodes segments back into a single-slash path', () => {
    expect(encodeUrlPath(['docs', 'a b'], true)).toBe('/docs/a%20b/');
    expect(encodeUrlPath([], true)).toBe('/');
  });
});

describe('notModified', () => {
  const etag = '"1f-2a"';
  const lm = new Date(Date.UTC(2026, 0, 1)).toUTCString();
  it('If-None-Match decides when present (weak comparison, lists, *)', () => {
    expect(notModified(etag, undefined, etag, lm)).toBe(true);
    expect(notModified(`W/${etag}`, undefined, etag, lm)).toBe(true);
    expect(notModified(`"x", ${etag}`, undefined, etag, lm)).toBe(true);
    expect(notModified('*', undefined, etag, lm)).toBe(true);
    expect(notModified('"x"', lm, etag, lm)).toBe(false);
  });
  it('else If-Modified-Since, second precision', () => {
    expect(notModified(undefined, lm, etag, lm)).toBe(true);
    expect(notModified(undefined, new Date(Date.UTC(2025, 11, 31)).toUTCString(), etag, lm)).toBe(false);
    expect(notModified(undefined, 'not a date', etag, lm)).toBe(false);
  });
});

describe('cache policy', () => {
  it('never caches loader files; max-age only above 0', () => {
    expect(isLoaderFile('syn.loader.js')).toBe(true);
    expect(isLoaderFile('ACK.LOADER.MJS')).toBe(true);
    expect(isLoaderFile('loader.js')).toBe(false);
    expect(cacheHeaders('ack.loader.js', 60)).toEqual([
      ['Cache-Control', 'no-cache, no-store'],
      ['Expires', '-1'],
    ]);
    expect(cacheHeaders('a.css', 60)).toEqual([['Cache-Control', 'public, max-age=60']]);
    expect(cacheHeaders('a.css', 0)).toEqual([['Cache-Control', 'no-cache']]);
  });
});
