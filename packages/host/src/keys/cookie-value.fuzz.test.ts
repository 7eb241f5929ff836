import fc from 'fast-check';
import cookieParser from 'cookie-parser';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { cookieValue, ownCookieHeader } from './cookie-value.js';

// The sign-in phase reads the authentication cookie by itself (cookie-value.ts); whatever a client
// sends in `Cookie`, it must read the value cookie-parser would give modules in `req.cookies`.
const parse = cookieParser();
function cookieParserValue(header: string, name: string): unknown {
  const req: { headers: { cookie: string }; cookies?: Record<string, unknown> } = { headers: { cookie: header } };
  Reflect.apply(parse, undefined, [req, {}, () => {}]);
  return req.cookies?.[name];
}

const NAMES = ['a', 'app.AuthenticationScheme', 'ack.Session', ' a', 'a ', 'A'];
const piece = fc.oneof(
  fc.constantFrom(
    ...NAMES,
    ';',
    '=',
    '"',
    ' ',
    '\t',
    '%',
    '%2',
    '%3D',
    '%E0%A4%A',
    'j:',
    'v1.x.y',
    ',',
    '\u0000',
    'é',
    ';;',
  ),
  fc.string({ maxLength: 6 }),
);
const header = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''));
const pairs = fc
  .array(
    fc.tuple(
      fc.constantFrom(...NAMES),
      fc.array(piece, { maxLength: 6 }).map((p) => p.join('')),
      fc.constantFrom('; ', ';', ' ;\t'),
    ),
    { maxLength: 8 },
  )
  .map((list) => list.map(([n, v, sep]) => `${n}=${v}${sep}`).join(''));

describe('cookieValue', () => {
  it('reads the value cookie-parser reads, for any header', () => {
    fc.assert(
      fc.property(fc.oneof(header, pairs), fc.constantFrom(...NAMES), (h, name) => {
        const expected = cookieParserValue(h, name);
        // cookie-parser turns a `j:` value that is JSON into an object, which the sign-in phase drops.
        if (typeof expected !== 'string') {
          const mine = cookieValue(h, name);
          expect(mine === undefined || mine.startsWith('j:')).toBe(true);
        } else {
          expect(cookieValue(h, name)).toBe(expected);
        }
      }),
      fuzzOptions(2000),
    );
  });

  it('takes the first of a repeated name, removes quotes, and keeps a value that does not decode', () => {
    expect(cookieValue('x=1; a=first; a=second', 'a')).toBe('first');
    expect(cookieValue(' a = "q%3Dv" ;b=2', 'a')).toBe('q=v');
    expect(cookieValue('a=%E0%A4%A', 'a')).toBe('%E0%A4%A');
    expect(cookieValue('ab=1; b=2', 'a')).toBeUndefined();
    expect(cookieValue('novalue; a=1', 'a')).toBe('1');
    expect(cookieValue(undefined, 'a')).toBeUndefined();
  });
});

describe('ownCookieHeader (what express-session is shown)', () => {
  it('holds the one cookie, read as cookie-parser reads it in the whole header', () => {
    fc.assert(
      fc.property(fc.oneof(header, pairs), fc.constantFrom(...NAMES.filter((n) => n.trim() === n)), (h, name) => {
        const whole = cookieParserValue(h, name);
        const own = cookieParserValue(ownCookieHeader(h, name), name);
        if (typeof whole === 'string' || whole === undefined) expect(own).toBe(whole);
        else expect(own).toEqual(whole);
      }),
      fuzzOptions(2000),
    );
  });
});
