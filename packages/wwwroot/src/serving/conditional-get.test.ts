import { describe, expect, it } from 'vitest';
import { notModified } from './conditional.js';

// When a client's cached copy is still current (docs/static-files.md, RFC 9110 13.1): a wrong
// "not modified" leaves a browser on a stale file; a missed one costs a full download.
const ETAG = '"abc-123"';
const MODIFIED = 'Wed, 01 Jan 2025 10:00:00 GMT';

describe('conditional GET', () => {
  it('If-None-Match: the same tag, weak or strong, in a list, or *', () => {
    expect(notModified('"abc-123"', undefined, ETAG, MODIFIED)).toBe(true);
    expect(notModified('W/"abc-123"', undefined, ETAG, MODIFIED)).toBe(true);
    expect(notModified('"abc-123"', undefined, `W/${ETAG}`, MODIFIED)).toBe(true);
    expect(notModified('"x", "abc-123"', undefined, ETAG, MODIFIED)).toBe(true);
    expect(notModified(' "x" ,W/"abc-123" ', undefined, ETAG, MODIFIED)).toBe(true);
    expect(notModified(' * ', undefined, ETAG, MODIFIED)).toBe(true);
  });

  it('If-None-Match: near misses of the tag are another version', () => {
    for (const header of ['"abc-12"', '"abc-1234"', '"ABC-123"', 'abc-123', '"abc-123', '"x", "y"', '', 'W/', '"*"'])
      expect(notModified(header, undefined, ETAG, MODIFIED), header).toBe(false);
  });

  it('If-None-Match decides alone: a matching date does not make a different tag current', () => {
    expect(notModified('"other"', MODIFIED, ETAG, MODIFIED)).toBe(false);
    expect(notModified('"abc-123"', 'Thu, 01 Jan 1970 00:00:00 GMT', ETAG, MODIFIED)).toBe(true);
  });

  it('If-Modified-Since: current when the file is not newer, to the second', () => {
    expect(notModified(undefined, MODIFIED, ETAG, MODIFIED)).toBe(true);
    expect(notModified(undefined, 'Wed, 01 Jan 2025 10:00:01 GMT', ETAG, MODIFIED)).toBe(true);
    expect(notModified(undefined, 'Wed, 01 Jan 2025 09:59:59 GMT', ETAG, MODIFIED)).toBe(false);
    expect(notModified(undefined, 'not a date', ETAG, MODIFIED)).toBe(false);
    expect(notModified(undefined, MODIFIED, ETAG, 'not a date')).toBe(false);
  });

  it('without validators, the file is sent', () => {
    expect(notModified(undefined, undefined, ETAG, MODIFIED)).toBe(false);
  });
});
