import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzOptions, rawConnection } from '@ack/host/test-support';
import { startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// URL paths a hostile or broken client sends, byte for byte over a raw socket, to the static root
// and the contract screens (docs/static-files.md "Lookup in a served folder"): random segments,
// dot segments, percent-encodings (good, bad, overlong, double), unicode raw and encoded,
// backslashes, NUL, very long paths. Whatever arrives: an answer in bounded time, never a 5xx,
// never a byte of a file outside the roots (sentinels are planted there, behind symlinks and in
// dotfiles), a 200 only with the bytes of a file inside, a redirect only to a path of this host.
// Seeded and replayable (ACK_FUZZ_SEED, ACK_FUZZ_RUNS; a failure prints its seed).

const ROOT = 'modules/wwwroot/wwwroot';
const CONTRACT = 'contracts/wwwroot/HDS';
const SENTINEL = 'SENTINEL-NEVER-SERVED';

const inside: Record<string, string> = {
  [`${ROOT}/hello.txt`]: 'hello from the root',
  [`${ROOT}/index.html`]: 'root index',
  [`${ROOT}/docs/index.html`]: 'docs index',
  [`${ROOT}/a..b.txt`]: 'dots inside a name',
  [`${ROOT}/%2e%2e/inside.txt`]: 'a folder literally named %2e%2e',
  [`${ROOT}/Ünï cödé.txt`]: 'unicode name',
  [`${ROOT}/.well-known/security.txt`]: 'Contact: mailto:security@example.com',
  [`${CONTRACT}/SYS/SYS010.html`]: 'SYS010 screen',
  [`${CONTRACT}/SYS/a..b.html`]: 'dots inside a screen name',
  [`${CONTRACT}/index.html`]: 'contract index',
};
const outside: Record<string, string> = {
  'secret.txt': `${SENTINEL} home`,
  'modules/wwwroot/secret.txt': `${SENTINEL} module folder`,
  'contracts/wwwroot/secret.txt': `${SENTINEL} contracts`,
  'contracts/wwwroot/OTHER/other.html': `${SENTINEL} another application`,
  // Inside a root but never served: dotfiles, and the static root under the contract prefix.
  [`${ROOT}/.env`]: `${SENTINEL} dotfile`,
  [`${ROOT}/.git/config`]: `${SENTINEL} dot folder`,
  [`${ROOT}/.well-known/.secret`]: `${SENTINEL} dotfile in .well-known`,
  [`${ROOT}/view/in-static-root.txt`]: `${SENTINEL} static root under /view`,
  [`${CONTRACT}/.env`]: `${SENTINEL} contract dotfile`,
};

let t: WwwrootFixture;
const servedBodies = new Set(Object.values(inside));

beforeAll(async () => {
  t = await startWwwroot({ files: { ...inside, ...outside } });
  const link = (target: string, at: string) => fs.symlinkSync(target, path.join(t.home.home, at));
  link('..', `${ROOT}/up`);
  link('../../../secret.txt', `${ROOT}/link-out.txt`);
  link('.', `${ROOT}/same`);
  link('../..', `${CONTRACT}/SYS/up`);
  link('..', `${CONTRACT}/SYS/back`);
});
afterAll(() => t?.close());

/** Segments worth combining: real names, ways to climb, encodings good and bad, odd bytes. */
const segment: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.constantFrom(
      'hello.txt',
      'HELLO.TXT',
      'docs',
      'index.html',
      'a..b.txt',
      'view',
      'VIEW',
      'vi%65w',
      'SYS',
      'sys',
      'SYS010.html',
      'a..b.html',
      'secret.txt',
      'other.html',
      'OTHER',
      'HDS',
      'up',
      'same',
      'back',
      'link-out.txt',
      'in-static-root.txt',
      '.well-known',
      'security.txt',
      '.env',
      '.git',
      'config',
      '.secret',
      'wwwroot',
      'modules',
      'contracts',
      '%C3%9Cn%C3%AF%20c%C3%B6d%C3%A9.txt',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '...',
      '%2e',
      '%2e%2e',
      '%2E%2e',
      '.%2e',
      '%2e.',
      '%252e%252e',
      '%25',
      '%2f',
      '%2F',
      '..%2f..',
      '%5c',
      '..%5c..',
      '\\',
      '..\\..',
      '%00',
      '\0',
      '%c0%ae%c0%ae',
      '%c0%af',
      '%e0%80%ae',
      '%zz',
      '%',
      '%e',
      '%E0%A4%A',
      '%ff',
      '%e2%82%ac',
      'C:',
      'c%3a',
      ' ',
      '%20',
      '+',
      '?',
      '#',
      ';',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }).map((s) => encodeURIComponent(s)) },
  { weight: 1, arbitrary: fc.stringMatching(/^[!-~]{0,8}$/) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => 'a'.repeat(n)) },
);
const separator = fc.oneof(
  { weight: 12, arbitrary: fc.constant('/') },
  { weight: 1, arbitrary: fc.constantFrom('//', '\\', '/./', '/../') },
);
const composed = fc
  .tuple(
    fc.constantFrom('/', '/', '/', '/view/', '/view/SYS/', '/VIEW/', '//', '\\', ''),
    fc.array(fc.tuple(segment, separator), { maxLength: 5 }),
    segment,
    fc.constantFrom('', '', '/', '?x=1', '?../../secret.txt', '#frag'),
  )
  .map(([start, parts, last, end]) => start + parts.map(([s, sep]) => s + sep).join('') + last + end);
/** A path that serves a file, with one segment inserted or replaced: the near misses of a real URL. */
const nearMiss = fc
  .tuple(
    fc.constantFrom(
      ['hello.txt'],
      ['docs', ''],
      ['docs'],
      ['a..b.txt'],
      ['same', 'hello.txt'],
      ['.well-known', 'security.txt'],
      ['%252e%252e', 'inside.txt'],
      ['view', 'SYS', 'SYS010.html'],
      ['view', 'SYS', 'back', 'SYS', 'a..b.html'],
      ['view', ''],
    ),
    fc.nat(),
    fc.boolean(),
    segment,
  )
  .map(([segments, at, replace, odd]) => {
    const out: string[] = [...segments];
    out.splice(at % (out.length + 1), replace ? 1 : 0, odd);
    return '/' + out.join('/');
  });
/**
 * Ways to a sentinel, each character then mostly kept, else percent-encoded (either case, or
 * twice), case-flipped, or a `/` made a `\\`.
 */
const disguisedClimb = fc
  .constantFrom(
    ['..', 'secret.txt'],
    ['docs', '..', '..', 'secret.txt'],
    ['..', '..', '..', 'secret.txt'],
    ['up', 'secret.txt'],
    ['same', 'up', 'secret.txt'],
    ['link-out.txt'],
    ['.env'],
    ['.git', 'config'],
    ['.well-known', '.secret'],
    ['view', 'in-static-root.txt'],
    ['view', '.env'],
    ['view', '..', 'OTHER', 'other.html'],
    ['view', 'SYS', 'up', 'OTHER', 'other.html'],
    ['view', 'SYS', 'up', 'secret.txt'],
    ['view', 'SYS', 'back', '..', '..', 'secret.txt'],
  )
  .chain((route) => {
    const text = route.join('/');
    return fc
      .array(fc.nat(30), { minLength: text.length, maxLength: text.length })
      .map((choices) => '/' + [...text].map((c, i) => disguise(c, choices[i]!)).join(''));
  });

function disguise(c: string, choice: number): string {
  const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
  switch (choice) {
    case 8:
      return `%${hex}`;
    case 9:
      return `%${hex.toUpperCase()}`;
    case 10:
      return `%25${hex}`;
    case 11:
      return c === '/' ? '\\' : c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
    case 12:
      return c === '/' ? '%5c' : c;
    default:
      return c;
  }
}

const urlPath = fc.oneof(
  composed,
  nearMiss,
  { weight: 2, arbitrary: disguisedClimb },
  fc.constantFrom('/hello.txt', '/docs/', '/view/SYS/SYS010.html'),
);

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
  raw: string;
}

/** One request over its own raw connection: the path is sent as its UTF-8 bytes, nothing normalised. */
async function send(method: string, target: string): Promise<Answer> {
  const c = await rawConnection(t.url);
  c.write(
    Buffer.concat([
      Buffer.from(`${method} `),
      Buffer.from(target, 'utf8'),
      Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
    ]),
  );
  const closed = await c.closedWithin(10_000);
  c.destroy();
  expect(closed, 'the host answers and closes the connection').toBe(true);
  return parse(c.text);
}

function parse(raw: string): Answer {
  const split = raw.indexOf('\r\n\r\n');
  expect(split, `an HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`).toBeGreaterThan(0);
  const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine + ' ')?.[1]);
  const headers = new Map(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  let body = Buffer.from(raw.slice(split + 4), 'latin1');
  if (headers.get('transfer-encoding') === 'chunked') {
    const chunks: Buffer[] = [];
    for (let at = 0; ;) {
      const eol = body.indexOf('\r\n', at);
      const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (!size) break;
      chunks.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(chunks);
  }
  return { status, headers, body, raw };
}

describe('URL paths to the static root and the contract screens', () => {
  it('answer every path without a 5xx and never with the bytes of a file outside the roots', async () => {
    const seen = new Map<number, number>();
    const options = fuzzOptions();
    await fc.assert(
      fc.asyncProperty(urlPath, fc.constantFrom('GET', 'GET', 'HEAD'), async (target, method) => {
        const answer = await send(method, target);
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        expect(answer.status).toBeGreaterThanOrEqual(200);
        expect(answer.status).toBeLessThan(500);
        expect(answer.raw).not.toContain(SENTINEL);
        if (answer.status === 200 && method === 'GET') expect(servedBodies).toContain(answer.body.toString('utf8'));
        if (answer.status >= 300 && answer.status < 400) {
          // A redirect stays on this host: one `/`, never `//` or `/\`.
          expect(answer.headers.get('location')).toMatch(/^\/(?![/\\])/);
        }
      }),
      options,
    );
    // The paths reached files, refusals and misses alike, so the property was not vacuous.
    if (options.numRuns >= 100) for (const status of [200, 400, 404]) expect(seen.get(status) ?? 0).toBeGreaterThan(0);
  });

  it('the sentinels are where a climb out would find them, and the served files answer', async () => {
    for (const [file, content] of Object.entries(outside)) {
      expect(fs.readFileSync(path.join(t.home.home, file), 'utf8')).toBe(content);
    }
    expect((await send('GET', '/up/secret.txt')).status).toBe(404);
    const hello = await send('GET', '/same/hello.txt');
    expect(hello.status).toBe(200);
    expect(hello.body.toString()).toBe('hello from the root');
    const screen = await send('GET', '/view/SYS/back/SYS/SYS010.html');
    expect(screen.body.toString()).toBe('SYS010 screen');
    const unicode = await send('GET', '/%C3%9Cn%C3%AF%20c%C3%B6d%C3%A9.txt');
    expect(unicode.body.toString()).toBe('unicode name');
    // Raw non-ASCII bytes in the request line are refused by the HTTP parser itself.
    expect((await send('GET', '/Ünï%20cödé.txt')).status).toBe(400);
  });
});
