import { describe, expect, it } from 'vitest';
import { rangeAnswer } from './ranges.js';

// Range at its edges (docs/static-files.md "Responses"): one satisfiable range is a 206 of that
// slice; several ranges, or a malformed one, are the whole file.
describe('rangeAnswer', () => {
  it('answers several ranges that do not merge with the whole file', () => {
    expect(rangeAnswer(10, 'bytes=0-1,5-6')).toEqual({ status: 200 });
    expect(rangeAnswer(10, 'bytes=0-1,2-3')).toEqual({ status: 206, start: 0, end: 3 }); // adjacent: merged
  });

  it('treats a suffix with trailing junk as malformed (the whole file), not as a suffix', () => {
    expect(rangeAnswer(3, 'bytes=-5x')).toEqual({ status: 200 });
    expect(rangeAnswer(3, 'bytes=-5')).toEqual({ status: 206, start: 0, end: 2 });
    expect(rangeAnswer(3, 'bytes= - 2 ')).toEqual({ status: 206, start: 1, end: 2 });
  });
});
