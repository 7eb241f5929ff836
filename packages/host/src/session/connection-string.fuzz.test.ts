import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ConnectionStringError,
  parseMySqlConnectionString,
  parsePostgreSqlConnectionString,
  parseRedisConnectionString,
  parseSqlServerConnectionString,
} from './connection-string.js';

// Whatever is written in a connection-string setting, start-up stops with the documented
// validation error or parses it (docs/sessions.md "Connection strings"); the message never
// carries the password.
const parsers = [
  [
    'MySql',
    parseMySqlConnectionString,
    ['Server', 'Port', 'Database', 'Uid', 'Pwd', 'Password', 'SslMode', 'Connect Timeout'],
  ],
  [
    'PostgreSql',
    parsePostgreSqlConnectionString,
    ['Host', 'Port', 'Database', 'Username', 'Password', 'SSL Mode', 'Timeout'],
  ],
  [
    'SqlServer',
    parseSqlServerConnectionString,
    [
      'Data Source',
      'Initial Catalog',
      'User ID',
      'Password',
      'Encrypt',
      'TrustServerCertificate',
      'Integrated Security',
    ],
  ],
] as const;

const odd = fc.constantFrom(';', '=', '"', "'", ' ', '\t', ',', ':', '\\', '""', "''", '\u0000', 'é');
const text = fc.array(fc.oneof(fc.string({ maxLength: 6 }), odd), { maxLength: 8 }).map((parts) => parts.join(''));
const keyword = (names: readonly string[]) =>
  fc.oneof(
    fc.constantFrom(...names).chain((k) => fc.constantFrom(k, k.toLowerCase(), k.toUpperCase(), ` ${k} `)),
    text,
  );
const value = fc.oneof(
  text,
  text.map((v) => `"${v.replace(/"/g, '""')}"`),
  text.map((v) => `'${v}`),
);
/** A password marker no other part can contain. */
const password = fc.stringMatching(/^[A-Za-z0-9]{6,12}$/).map((s) => `Pw${s}Zq`);

function expectOnlyValidationErrors(parse: () => unknown, secret: string): void {
  try {
    parse();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectionStringError);
    expect((err as Error).message).not.toContain(secret);
  }
}

describe('connection-string parsing under random input', () => {
  for (const [name, parse, names] of parsers) {
    it(`${name}: random text and random Keyword=Value lists fail only with ConnectionStringError`, () => {
      fc.assert(
        fc.property(text, (raw) => expectOnlyValidationErrors(() => parse(raw, 'X'), '\u0001never')),
        { numRuns: 500 },
      );
      fc.assert(
        fc.property(
          fc.array(fc.tuple(keyword(names), value), { maxLength: 8 }),
          password,
          fc.nat(8),
          fc.constantFrom(';', ';;', ' ; '),
          (pairs, secret, at, separator) => {
            const parts = pairs.map(([k, v]) => `${k}=${v}`);
            // The password, well quoted, somewhere in the list.
            parts.splice(Math.min(at, parts.length), 0, `Password="${secret}"`);
            expectOnlyValidationErrors(() => parse(parts.join(separator), 'X'), secret);
          },
        ),
        { numRuns: 1000 },
      );
    });
  }

  it('Redis: random option lists fail only with ConnectionStringError, never naming the password', () => {
    const option = fc.oneof(
      fc
        .tuple(fc.constantFrom('ssl', 'user', 'defaultDatabase', 'connectTimeout', 'abortConnect', 'SSL'), text)
        .map(([k, v]) => `${k}=${v}`),
      text,
    );
    fc.assert(
      fc.property(fc.array(option, { maxLength: 6 }), password, fc.nat(6), (options, secret, at) => {
        options.splice(Math.min(at, options.length), 0, `password=${secret}`);
        expectOnlyValidationErrors(() => parseRedisConnectionString(options.join(','), 'X'), secret);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('a password written without the quotes it needs', () => {
  it('is not shown when its tail after ";" reads as an unknown keyword', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => parseMySqlConnectionString('Server=db;Pwd=se;cretTail=x', 'X'), 'cretTail'],
      [() => parsePostgreSqlConnectionString('Host=db;Password=se;cretTail=x', 'X'), 'cretTail'],
      [() => parseSqlServerConnectionString('Data Source=db;Password=se;cretTail=x', 'X'), 'cretTail'],
    ];
    for (const [parse, tail] of cases) {
      expect(parse).toThrow(ConnectionStringError);
      expect(parse).not.toThrow(new RegExp(tail, 'i'));
    }
    // A quote left open swallows the parts after it, the password among them, into one value.
    const open = () => parseMySqlConnectionString(`Server=db;Connect Timeout=';Password="PwSecret";Server='`, 'X');
    expect(open).toThrow(ConnectionStringError);
    expect(open).not.toThrow(/PwSecret/);
    expect(() => parseMySqlConnectionString('Server=db;Connect Timeout=soon', 'X')).toThrow('"soon" is not a number');
    // The nearest neighbour: an unknown keyword elsewhere is named, so that it can be fixed.
    expect(() => parseMySqlConnectionString('Server=db;Colour=x;Pwd=secret', 'X')).toThrow('unknown keyword "colour"');
    expect(() => parseRedisConnectionString('db:6379,colour=x,password=secret', 'X')).toThrow(
      'unknown option "colour"',
    );
  });
});
