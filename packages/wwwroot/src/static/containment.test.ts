import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// Containment end to end (docs/static-files.md "Lookup in a served folder"), over a real socket with
// paths sent byte for byte: each way a path could climb out of the static root or the contract
// folder, beside the nearest path that must still be served. A dot segment is refused with 400
// even when it would stay inside (rule 2): the same file is served by its plain path, and names
// that merely contain dots, or a double encoding that decodes to a literal `%2e%2e` name, are files
// like any other.

const ROOT = 'modules/wwwroot/wwwroot';
const CONTRACT = 'contracts/wwwroot/HDS';
const SECRET = 'SECRET-BYTES-OUTSIDE-EVERY-ROOT';

let t: WwwrootFixture;

beforeAll(async () => {
  t = await startWwwroot({
    files: {
      [`${ROOT}/hello.txt`]: 'hello from the root',
      [`${ROOT}/docs/index.html`]: 'docs index',
      [`${ROOT}/a..b.txt`]: 'dots inside a name',
      [`${ROOT}/%2e%2e/inside.txt`]: 'a folder literally named %2e%2e',
      [`${ROOT}/secret.txt`]: 'the root has its own secret.txt',
      [`${CONTRACT}/SYS/SYS010.html`]: 'SYS010 screen',
      [`${CONTRACT}/SYS/a..b.html`]: 'dots inside a screen name',
      [`${CONTRACT}/%2e%2e/inside.html`]: 'a contract folder literally named %2e%2e',
      'contracts/wwwroot/OTHER/other.html': SECRET,
      'contracts/wwwroot/secret.txt': SECRET,
      'modules/wwwroot/secret.txt': SECRET,
      'secret.txt': SECRET,
    },
  });
});
afterAll(() => t?.close());

// `a/../b` spelled on disk: symlinked folders whose names pass every URL rule and the folder walk,
// so only the real-path containment (rule 5) tells the one that climbs out from the one inside.
beforeAll(() => {
  const link = (target: string, at: string) => fs.symlinkSync(target, path.join(t.home.home, at));
  link('..', `${ROOT}/up`); // modules/wwwroot: outside the static root
  link('../..', `${ROOT}/docs/up2`); // modules/wwwroot again, two levels up
  link('.', `${ROOT}/same`); // the static root itself
  link('..', `${ROOT}/docs/back`); // docs/.. = the static root
  link('../..', `${CONTRACT}/SYS/up`); // contracts/wwwroot: outside the contract folder
  link('..', `${CONTRACT}/SYS/back`); // SYS/.. = the contract folder
});

const served: ReadonlyArray<readonly [string, string]> = [
  // Static root.
  ['/hello.txt', 'hello from the root'],
  ['/hello%2etxt', 'hello from the root'],
  ['/%68ello.txt', 'hello from the root'],
  ['//hello.txt', 'hello from the root'],
  ['/docs/', 'docs index'],
  ['/docs//index.html', 'docs index'],
  ['/a..b.txt', 'dots inside a name'],
  ['/a%2e%2eb.txt', 'dots inside a name'],
  ['/%252e%252e/inside.txt', 'a folder literally named %2e%2e'],
  ['/secret.txt', 'the root has its own secret.txt'],
  // Contract folder.
  ['/view/SYS/SYS010.html', 'SYS010 screen'],
  ['/view/SYS/SYS010%2ehtml', 'SYS010 screen'],
  ['/view//SYS//SYS010.html', 'SYS010 screen'],
  ['/view/SYS/a..b.html', 'dots inside a screen name'],
  ['/view/%252e%252e/inside.html', 'a contract folder literally named %2e%2e'],
  // Symlinked folders that stay inside their root.
  ['/same/hello.txt', 'hello from the root'],
  ['/SAME/same/Hello.txt', 'hello from the root'],
  ['/docs/back/hello.txt', 'hello from the root'],
  ['/docs/back/docs/back/a..b.txt', 'dots inside a name'],
  ['/view/SYS/back/SYS/SYS010.html', 'SYS010 screen'],
  ['/VIEW/sys/BACK/sys/sys010.html', 'SYS010 screen'],
];

// Paths that would stay inside once normalised: refused all the same (400), never normalised.
const insideButDotted = [
  '/docs/../hello.txt',
  '/docs/%2e%2e/hello.txt',
  '/docs/%2E%2E/hello.txt',
  '/docs/.%2e/hello.txt',
  '/./hello.txt',
  '/%2e/hello.txt',
  '/docs/./index.html',
  '/view/SYS/../SYS/SYS010.html',
  '/view/SYS/%2e%2e/SYS/SYS010.html',
  '/view/./SYS/SYS010.html',
];

// Paths that climb out of their root: 400 or 404, never the outside bytes.
const climbing = [
  '/../secret.txt',
  '/docs/../../secret.txt',
  '/docs/../../../secret.txt',
  '/docs/%2e%2e/%2e%2e/secret.txt',
  '/docs/..%2f..%2fsecret.txt',
  '/docs/%2e%2e%2f%2e%2e%2fsecret.txt',
  '/docs/..%5c..%5csecret.txt',
  '/docs\\..\\..\\secret.txt',
  '/docs/..\\..\\secret.txt',
  '/%5c..%5c..%5csecret.txt',
  '/%252e%252e/%252e%252e/secret.txt',
  '/docs/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt',
  '/docs/..%00/secret.txt',
  '/view/../secret.txt',
  '/view/SYS/../../secret.txt',
  '/view/SYS/../../OTHER/other.html',
  '/view/%2e%2e/OTHER/other.html',
  '/view/%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.txt',
  '/view/SYS/..%2f..%2f..%2f..%2fsecret.txt',
  '/view/SYS/..%5c..%5c..%5csecret.txt',
  '/view\\..\\..\\..\\secret.txt',
  '/VIEW/%2E%2E/OTHER/other.html',
  // Symlinked folders that climb out: only the real-path check stops these.
  '/up/secret.txt',
  '/UP/SECRET.TXT',
  '/same/up/secret.txt',
  '/docs/up2/secret.txt',
  '/docs/back/up/secret.txt',
  '/view/SYS/up/OTHER/other.html',
  '/view/SYS/up/secret.txt',
  '/view/SYS/back/SYS/up/OTHER/other.html',
];

describe('containment over HTTP', () => {
  it.each(served)('serves %s (it names a file inside)', async (p, body) => {
    const res = await rawRequest(t.url, p);
    expect(res.status).toBe(200);
    expect(res.text).toBe(body);
  });

  it.each(insideButDotted)('refuses %s with 400 though it would stay inside', async (p) => {
    const res = await rawRequest(t.url, p);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ status: 400, code: 'request.bad_path' });
  });

  it.each(climbing)('refuses %s, never with the outside bytes', async (p) => {
    const res = await rawRequest(t.url, p);
    expect([400, 404]).toContain(res.status);
    expect(res.text).not.toContain(SECRET);
  });

  it('answers HEAD the same way', async () => {
    expect((await rawRequest(t.url, '/docs/../hello.txt', { method: 'HEAD' })).status).toBe(400);
    expect((await rawRequest(t.url, '/a..b.txt', { method: 'HEAD' })).status).toBe(200);
  });

  it('keeps the planted outside files where a climb would find them', () => {
    // Guards the refusals above: each outside target exists, so a 404 is not an accident of the fixture.
    for (const file of ['secret.txt', 'modules/wwwroot/secret.txt', 'contracts/wwwroot/OTHER/other.html']) {
      expect(fs.readFileSync(path.join(t.home.home, file), 'utf8')).toBe(SECRET);
    }
  });
});
