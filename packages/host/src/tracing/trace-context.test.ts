import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, parseTracestate } from './trace-context.js';

// Each refusal beside its nearest neighbour that must still be read (W3C Trace Context).
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${PARENT}-01`;

describe('traceparent', () => {
  it('reads a version 00 header, and its sampled flag', () => {
    expect(parseTraceparent(VALID)).toEqual({ traceId: TRACE, parentId: PARENT, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-00`)?.sampled).toBe(false);
    // Flags this version does not define are read, and not passed on.
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-ff`)?.sampled).toBe(true);
    expect(formatTraceparent(TRACE, PARENT, true)).toBe(VALID);
  });

  it('refuses a header one character short or long', () => {
    expect(parseTraceparent(VALID.slice(0, -1))).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE.slice(1)}-${PARENT}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${PARENT.slice(1)}-01`)).toBeUndefined();
    expect(parseTraceparent(`${VALID}0`)).toBeUndefined();
    expect(parseTraceparent(`${VALID}-`)).toBeUndefined(); // version 00 has nothing after the flags
  });

  it('refuses uppercase hex, which the lowercase neighbour passes', () => {
    expect(parseTraceparent(VALID.toUpperCase())).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE.replace('f', 'F')}-${PARENT}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${PARENT.replace('f', 'F')}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-0A`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-0a`)).toBeDefined();
  });

  it('refuses an all-zero trace id or parent id, not one a bit away from zero', () => {
    expect(parseTraceparent(`00-${'0'.repeat(32)}-${PARENT}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${'0'.repeat(31)}1-${PARENT}-01`)?.traceId).toBe(`${'0'.repeat(31)}1`);
    expect(parseTraceparent(`00-${TRACE}-${'0'.repeat(16)}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${'0'.repeat(15)}1-01`)?.parentId).toBe(`${'0'.repeat(15)}1`);
  });

  it('reads a later version as the spec says, and refuses version ff', () => {
    expect(parseTraceparent(`ff-${TRACE}-${PARENT}-01`)).toBeUndefined();
    expect(parseTraceparent(`fe-${TRACE}-${PARENT}-01`)).toEqual({ traceId: TRACE, parentId: PARENT, sampled: true });
    // More fields after a "-": read; anything else glued to the flags: not.
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01-what-comes-next`)?.traceId).toBe(TRACE);
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01x`)).toBeUndefined();
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-0`)).toBeUndefined();
    expect(parseTraceparent(`0g-${TRACE}-${PARENT}-01`)).toBeUndefined();
  });

  it('refuses two headers, and separators other than "-"', () => {
    expect(parseTraceparent([VALID, VALID])).toBeUndefined();
    expect(parseTraceparent(`${VALID}, ${VALID}`)).toBeUndefined();
    expect(parseTraceparent(VALID.replace(/-/g, '_'))).toBeUndefined();
    expect(parseTraceparent(` ${VALID}`)).toBeUndefined();
    expect(parseTraceparent(undefined)).toBeUndefined();
  });
});

describe('tracestate', () => {
  it('passes a valid list on, without empty members and the spaces around members', () => {
    expect(parseTracestate('congo=t61rcWkgMzE')).toBe('congo=t61rcWkgMzE');
    expect(parseTracestate(' rojo=00f067aa0ba902b7 ,, congo=t61rcWkgMzE\t')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    );
    expect(parseTracestate(['a=1', 'b=2'])).toBe('a=1,b=2');
    expect(parseTracestate('fw529a3039@dt=ZmY')).toBe('fw529a3039@dt=ZmY');
    expect(parseTracestate('')).toBeUndefined();
  });

  it('drops a list with a bad member or a key twice, not its neighbour', () => {
    expect(parseTracestate('Congo=x')).toBeUndefined();
    expect(parseTracestate('congo=x y')).toBe('congo=x y');
    expect(parseTracestate('congo=x ')).toBe('congo=x'); // trailing space is OWS
    expect(parseTracestate('congo=a=b')).toBeUndefined();
    expect(parseTracestate('congo=')).toBeUndefined();
    expect(parseTracestate('a=1,a=2')).toBeUndefined();
    expect(parseTracestate('a=1,b=2')).toBe('a=1,b=2');
  });

  it('takes 32 members, not 33', () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`);
    expect(parseTracestate(members(32).join(','))).toBe(members(32).join(','));
    expect(parseTracestate(members(33).join(','))).toBeUndefined();
  });

  it('passes on 512 characters as they are; at 513, drops the members over 128 characters first', () => {
    const member = (key: string, length: number) => `${key}=${'v'.repeat(length - key.length - 1)}`;
    const three = [member('a', 127), member('b', 127), member('c', 127)];
    const fits = [...three, member('d', 128)].join(',');
    expect(fits.length).toBe(512);
    expect(parseTracestate(fits)).toBe(fits);
    const over = [...three, member('d', 129)].join(',');
    expect(over.length).toBe(513);
    expect(parseTracestate(over)).toBe(three.join(','));
    // Nothing over 128 to drop: members go from the end.
    const small = Array.from({ length: 30 }, (_, i) => member(`k${i}`, 20)).join(',');
    expect(small.length).toBe(629);
    expect(parseTracestate(small)).toBe(small.slice(0, 24 * 21 - 1));
  });
});
