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

describe('a Redis password holding ","', () => {
  // The StackExchange.Redis form has no quoting, so such a password splits into parts; none of its
  // pieces may reach a message, nor be dialled as a host.
  const piece = fc.stringMatching(/^Zq[0-9]{2,6}(:[0-9]{1,5})?$/);
  const tail = fc.oneof(
    piece,
    piece.map((p) => `${p}=x`),
  );
  it('never names a piece of the password, wherever it stands', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<string>('ssl=true', 'db:6379', 'defaultDatabase=1', 'other:1'), { maxLength: 4 }),
        piece,
        fc.array(tail, { minLength: 1, maxLength: 3 }),
        fc.nat(4),
        (options, head, tails, at) => {
          const secret = [head, ...tails].join(',');
          options.splice(Math.min(at, options.length), 0, `password=${secret}`);
          let parsed: ReturnType<typeof parseRedisConnectionString> | undefined;
          try {
            parsed = parseRedisConnectionString(options.join(','), 'X');
          } catch (err) {
            expect(err).toBeInstanceOf(ConnectionStringError);
            for (const p of [head, ...tails]) expect((err as Error).message).not.toContain(p.split(/[:=]/)[0]);
            return;
          }
          throw new Error(`parsed a split password as ${JSON.stringify(parsed)}`);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses the part after password= when it reads as an endpoint or an unknown option; an option there is fine', () => {
    expect(() => parseRedisConnectionString('db:6379,password=ab,cd', 'X')).toThrow(/the part after password=/);
    expect(() => parseRedisConnectionString('password=ab,cd:6379', 'X')).toThrow(/the part after password=/);
    expect(() => parseRedisConnectionString('db:6379,password=ab,cd=ef', 'X')).toThrow(/the part after password=/);
    expect(() => parseRedisConnectionString('db:6379,password=ab,cd=ef', 'X')).not.toThrow(/cd/);
    // nearest neighbours: a known option after the password, and endpoints written first
    expect(parseRedisConnectionString('db:6379,password=ab,ssl=true', 'X')).toMatchObject({
      host: 'db',
      password: 'ab',
      tls: true,
    });
    expect(parseRedisConnectionString('db:6379,other:1,password=ab', 'X')).toMatchObject({
      host: 'db',
      password: 'ab',
    });
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
