import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// A precompressed sidecar is a file the host sends, so it obeys the containment rule of any file
// (docs/static-files.md, lookup rule 5): a `.br`/`.gz` symlink whose real path leaves the served
// folder is ignored, one that stays inside is followed. Over a real socket, for the static root, a
// contract folder and a shared-file target.

const ROOT = 'modules/wwwroot/wwwroot';
const CONTRACT = 'contracts/wwwroot/HDS';
const SECRET = 'OUTSIDE-THE-SERVED-FOLDER '.repeat(50);
const script = 'console.log("the served file");\n'.repeat(100);
const secretBr = zlib.brotliCompressSync(SECRET);
const secretGz = zlib.gzipSync(SECRET);
const scriptBr = zlib.brotliCompressSync(script);
const scriptGz = zlib.gzipSync(script);

/** The served folders under test: where the original lives and the URL it answers at. */
const cases = [
  { name: 'the static root', folder: ROOT, url: '/' },
  { name: 'a contract folder', folder: CONTRACT, url: '/view/' },
  { name: 'a shared-file target', folder: 'shared', url: '/shared/' },
] as const;

const catalog = {
  items: [
    ...['out.js', 'in.js'].map((name) => ({ requestPath: `/shared/${name}`, hostFilePath: `../shared/${name}` })),
    // Also a file of the static root: served from two folders, each with its own rule.
    { requestPath: '/theme.js', hostFilePath: `../${ROOT}/js/theme.js` },
  ],
};

function plant(t: WwwrootFixture): void {
  const home = t.home.home;
  const future = new Date(Date.now() + 60_000);
  for (const { folder } of cases) {
    const dir = path.join(home, folder);
    // Sidecars that leave the folder: newer than the original, so only containment can refuse them.
    t.home.write(`outside/${folder}/evil.js.br`, secretBr);
    t.home.write(`outside/${folder}/evil.js.gz`, secretGz);
    for (const ext of ['br', 'gz']) {
      const target = path.join(home, 'outside', folder, `evil.js.${ext}`);
      fs.utimesSync(target, future, future);
      fs.symlinkSync(target, path.join(dir, `out.js.${ext}`));
    }
    // The nearest neighbour: sidecars that are symlinks to a file inside the same folder.
    t.home.write(`${folder}/build/in.js.br`, scriptBr);
    t.home.write(`${folder}/build/in.js.gz`, scriptGz);
    for (const ext of ['br', 'gz']) {
      const target = path.join(dir, 'build', `in.js.${ext}`);
      fs.utimesSync(target, future, future);
      fs.symlinkSync(path.relative(dir, target), path.join(dir, `in.js.${ext}`));
    }
  }
  const themeBr = path.join(home, ROOT, 'build', 'theme.js.br');
  fs.utimesSync(themeBr, future, future);
  fs.symlinkSync(themeBr, path.join(home, ROOT, 'js', 'theme.js.br'));
}

function filesFor(): Record<string, string | object> {
  const files: Record<string, string | object> = {
    'config/shared.json': catalog,
    [`${ROOT}/js/theme.js`]: script,
    [`${ROOT}/build/theme.js.br`]: scriptBr,
  };
  for (const { folder } of cases) {
    files[`${folder}/out.js`] = script;
    files[`${folder}/in.js`] = script;
  }
  return files;
}

describe('a precompressed sidecar that leaves the served folder', () => {
  let t: WwwrootFixture;
  beforeAll(async () => {
    t = await startWwwroot({ moduleConfig: { SharedFileConfigPath: '../config/shared.json' }, files: filesFor() });
    plant(t);
  });
  afterAll(() => t?.close());

  for (const { name, url } of cases) {
    it(`is never sent, for ${name}: the original goes out as it is`, async () => {
      for (const accept of ['br', 'gzip', 'br, gzip', '*']) {
        const res = await rawRequest(t.url, `${url}out.js`, { headers: { 'Accept-Encoding': accept } });
        expect(res.status, accept).toBe(200);
        expect(res.headers['content-encoding'], accept).toBeUndefined();
        expect(res.text, accept).toBe(script);
      }
    });

    it(`is followed when it stays inside, for ${name}`, async () => {
      const b = await rawRequest(t.url, `${url}in.js`, { headers: { 'Accept-Encoding': 'br' } });
      expect(b.status).toBe(200);
      expect(b.headers['content-encoding']).toBe('br');
      expect(zlib.brotliDecompressSync(b.body).toString()).toBe(script);
      const g = await rawRequest(t.url, `${url}in.js`, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(g.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(g.body).toString()).toBe(script);
    });
  }

  it('is judged by the folder each URL serves the file from, whichever is asked first', async () => {
    // `js/theme.js.br` points into the static root's `build/`: inside the static root, outside the
    // shared file's own folder (`js/`).
    for (let round = 0; round < 3; round++) {
      const fromRoot = await rawRequest(t.url, '/js/theme.js', { headers: { 'Accept-Encoding': 'br' } });
      expect(fromRoot.headers['content-encoding']).toBe('br');
      expect(zlib.brotliDecompressSync(fromRoot.body).toString()).toBe(script);
      const shared = await rawRequest(t.url, '/theme.js', { headers: { 'Accept-Encoding': 'br' } });
      expect(shared.headers['content-encoding']).toBeUndefined();
      expect(shared.text).toBe(script);
    }
  });
});

describe('a sidecar that leaves the served folder, with UseResponseComression', () => {
  let t: WwwrootFixture;
  beforeAll(async () => {
    t = await startWwwroot({
      appSettings: { UseResponseComression: true },
      moduleConfig: { SharedFileConfigPath: '../config/shared.json' },
      files: filesFor(),
    });
    plant(t);
  });
  afterAll(() => t?.close());

  for (const { name, url } of cases) {
    it(`gives way to the host's own compression of the original, for ${name}`, async () => {
      const b = await rawRequest(t.url, `${url}out.js`, { headers: { 'Accept-Encoding': 'br' } });
      expect(b.status).toBe(200);
      expect(b.headers['content-encoding']).toBe('br');
      expect(zlib.brotliDecompressSync(b.body).toString()).toBe(script);
      const g = await rawRequest(t.url, `${url}out.js`, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(g.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(g.body).toString()).toBe(script);
    });
  }
});
