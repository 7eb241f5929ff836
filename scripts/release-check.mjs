#!/usr/bin/env node
// The release check (docs/releasing.md): packs @ack/host, @ack/wwwroot, @ack/loader and @ack/cli as
// they would be published, checks what each tarball holds, installs them with npm into an empty
// project outside this repository, compiles examples/embed there with a strict tsc, compiles every
// ```ts block of docs/api.md there under the same settings, starts the example and asks it for a
// custom module's route, a static file, the loader, a WebSocket handshake and an upload (so the
// runtime dependencies behind them, ws and multer, are installed), and runs the installed `ack`
// command: check, dev-cert --json and serve --https-port over HTTP/2.
// It expects built packages (`pnpm release:check` builds first). Exit code 0 when every check
// passed, 1 otherwise; `--keep` leaves the temporary project for a look.
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['host', 'wwwroot', 'loader', 'cli'];
const keep = process.argv.includes('--keep');
const problems = [];
const step = (text) => process.stdout.write(`release-check: ${text}\n`);
const fail = (text) => {
  problems.push(text);
  process.stdout.write(`release-check: FAIL ${text}\n`);
};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-release-'));
const packs = path.join(work, 'packs');
const project = path.join(work, 'project');
const children = [];
// The dependencies and peers of each package packed so far, by folder name (host before cli).
const declaredBy = {};
// A sync token for the consumer's wwwroot module, written into the copy only.
const syncToken = crypto.randomBytes(18).toString('base64url');

try {
  fs.mkdirSync(packs);
  const tarballs = {};
  for (const name of PACKAGES) {
    const dir = path.join(repo, 'packages', name);
    const out = execFileSync('pnpm', ['pack', '--pack-destination', packs], { cwd: dir, encoding: 'utf8' });
    const file = out.trim().split('\n').pop().trim();
    tarballs[name] = path.isAbsolute(file) ? file : path.join(packs, path.basename(file));
    checkTarball(name, tarballs[name]);
  }
  step(`packed ${PACKAGES.map((n) => path.basename(tarballs[n])).join(', ')}`);

  // The consumer: examples/embed as a team would copy it, depending on the tarballs.
  fs.cpSync(path.join(repo, 'examples', 'embed'), project, {
    recursive: true,
    filter: (src) => !/[\\/](node_modules|dist)$/.test(src),
  });
  const pkgFile = path.join(project, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
  pkg.dependencies = Object.fromEntries(PACKAGES.map((n) => [`@ack/${n}`, `file:${tarballs[n]}`]));
  // The repository's own TypeScript compiles the consumer, so the check needs no compiler download.
  delete pkg.devDependencies;
  fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2) + '\n');
  const wwwrootJson = path.join(project, 'modules', 'wwwroot', 'module.json');
  const wwwroot = JSON.parse(fs.readFileSync(wwwrootJson, 'utf8'));
  wwwroot.ModuleConfig.FileSyncTokens = [syncToken];
  fs.writeFileSync(wwwrootJson, JSON.stringify(wwwroot, null, 2) + '\n');
  const started = Date.now();
  execFileSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts'],
    {
      cwd: project,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  step(`npm install into an empty project: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const name of PACKAGES) {
    const installed = JSON.parse(
      fs.readFileSync(path.join(project, 'node_modules', '@ack', name, 'package.json'), 'utf8'),
    );
    if (
      installed.version !==
      JSON.parse(fs.readFileSync(path.join(repo, 'packages', name, 'package.json'), 'utf8')).version
    ) {
      fail(`@ack/${name}: npm installed ${installed.version}, not the packed version`);
    }
  }

  const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
    step('strict tsc consumer compiled (strict, exactOptionalPropertyTypes, declaration, skipLibCheck off)');
  } catch (err) {
    fail(`tsc on the consumer failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }

  compileDocBlocks(tsc, 'docs/api.md');

  const ack = path.join(project, 'node_modules', '.bin', 'ack');
  if (fs.existsSync(path.join(project, 'dist', 'main.js'))) await runConsumer(ack);

  const version = execFileSync(ack, ['--version'], { cwd: project, encoding: 'utf8' }).trim();
  const cliVersion = JSON.parse(fs.readFileSync(path.join(repo, 'packages', 'cli', 'package.json'), 'utf8')).version;
  if (version !== cliVersion) fail(`ack --version printed ${version}, not ${cliVersion}`);
  else step(`installed ack command runs (ack --version: ${version})`);
  try {
    execFileSync(ack, ['check', '--app-dir', 'app'], { cwd: project, encoding: 'utf8' });
    step('ack check passes on the consumer home');
  } catch (err) {
    fail(`ack check on the consumer home failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
  const loaderFile = path.join(project, 'node_modules', '@ack', 'loader', 'dist', 'ack.loader.js');
  if (!fs.existsSync(loaderFile)) fail('@ack/loader has no dist/ack.loader.js');

  const devCert = JSON.parse(
    execFileSync(ack, ['dev-cert', '--app-dir', 'app', '--json'], { cwd: project, encoding: 'utf8' }),
  );
  if (devCert.ok !== true || !fs.existsSync(devCert.cert ?? '') || !/DNS:localhost/.test(devCert.subjectAltName ?? ''))
    fail(`ack dev-cert --json printed ${JSON.stringify(devCert)}`);
  else {
    step('ack dev-cert --json made the development certificate');
    await runServeHttps(ack, fs.readFileSync(devCert.cert));
  }
  hostAlone(tarballs.host);
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (keep) step(`kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
}

if (problems.length > 0) {
  step(`${problems.length} problem(s)`);
  process.exit(1);
}
step('all checks passed');

/**
 * Every ```ts block of a page of docs/, each written to a file of its own in the consumer project
 * and compiled there with the consumer's strict settings: a reader can paste any of them into a
 * project that installed the packages.
 */
function compileDocBlocks(tsc, page) {
  const blocks = [...fs.readFileSync(path.join(repo, page), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(
    (m) => m[1],
  );
  if (blocks.length === 0) return fail(`${page}: no TypeScript blocks found`);
  const dir = path.join(project, 'doc-blocks');
  fs.mkdirSync(dir);
  const files = blocks.map((code, i) => {
    const file = `block-${i + 1}.ts`;
    // `export {}` keeps each block a module of its own, so names never clash between blocks.
    fs.writeFileSync(path.join(dir, file), `${code}export {};\n`);
    return file;
  });
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ extends: '../tsconfig.json', compilerOptions: { rootDir: '.', noEmit: true }, include: files }),
  );
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
    step(`${page}: ${blocks.length} TypeScript blocks compiled`);
  } catch (err) {
    // tsc names each error by its block file; the blocks are numbered in page order.
    fail(
      `${page}: a TypeScript block does not compile (blocks numbered in page order):\n${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
  }
}

/** What a published tarball must and must not hold. */
function checkTarball(name, file) {
  const listing = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((p) => p.replace(/^package\//, ''));
  const files = new Set(listing);
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', file, 'package/package.json'], { encoding: 'utf8' }));
  const text = JSON.stringify(manifest);
  if (text.includes('workspace:')) fail(`@ack/${name}: package.json still has a workspace: range`);
  if (text.includes('"source"')) fail(`@ack/${name}: exports still carry the repository-only "source" condition`);
  for (const field of ['license', 'repository', 'engines', 'description']) {
    if (!manifest[field]) fail(`@ack/${name}: package.json has no ${field}`);
  }
  for (const required of ['README.md', 'LICENSE', 'package.json']) {
    if (!files.has(required)) fail(`@ack/${name}: tarball has no ${required}`);
  }
  for (const p of listing) {
    if (
      /(^|\/)(test-support|__tests__)\//.test(p) ||
      /\.test\.[cm]?[jt]s(\.map)?$/.test(p) ||
      /test-fixture/.test(p) ||
      /tsbuildinfo$/.test(p)
    ) {
      fail(`@ack/${name}: ships ${p}, which is for this repository's tests`);
    }
  }
  for (const target of Object.values(exportTargets(manifest.exports))) {
    if (!files.has(target.replace(/^\.\//, '')))
      fail(`@ack/${name}: exports name ${target}, which is not in the tarball`);
  }
  for (const bin of Object.values(manifest.bin ?? {})) {
    if (!files.has(bin.replace(/^\.\//, ''))) fail(`@ack/${name}: bin ${bin} is not in the tarball`);
  }
  const unpacked = path.join(packs, `unpacked-${name}`);
  fs.mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', file, '-C', unpacked]);
  // Every package the shipped code imports (or resolves) at run time is a dependency, and every one
  // its declarations import has its types among the dependencies: npm installs nothing else.
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  declaredBy[name] = declared;
  const builtins = new Set(builtinModules);
  for (const p of listing.filter((f) => f.startsWith('dist/') && /\.(m?js|d\.ts)$/.test(f))) {
    const text = fs.readFileSync(path.join(unpacked, 'package', p), 'utf8');
    for (const [owner, code] of bundledModules(text)) {
      for (const m of code.matchAll(
        /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|((?:\brequire|\))\.resolve\(\s*))['"]([^'"./][^'"]*)['"]/g,
      )) {
        const specifier = m[2];
        if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const pkgName = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0];
        const types = `@types/${pkgName.replace(/^@([^/]+)\/(.+)$/, '$1__$2')}`;
        // An import resolves from the file that ships; a `.resolve(...)` of a bundled module of
        // another package from that package's own place (the ack bundle's own-module-urls step).
        const deps = m[1] && owner ? declaredBy[owner] : declared;
        if (!deps.has(pkgName) && !(p.endsWith('.d.ts') && deps.has(types)))
          fail(
            `@ack/${name}: ${p} imports ${specifier}, which is not among the dependencies of @ack/${m[1] && owner ? owner : name}`,
          );
      }
    }
  }
  // Every source map must point at sources that ship, or a debugger shows nothing.
  const maps = listing.filter((p) => p.endsWith('.map'));
  if (maps.length > 0) {
    for (const map of maps) {
      const { sources = [] } = JSON.parse(fs.readFileSync(path.join(unpacked, 'package', map), 'utf8'));
      for (const source of sources) {
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(map), source));
        if (!files.has(resolved)) fail(`@ack/${name}: ${map} points at ${resolved}, which is not in the tarball`);
      }
    }
  }
}

/**
 * The modules of a file, each with the package of this repository it came from: a file of the `ack`
 * bundle (packages/cli/build.mjs) holds modules of @ack/host and @ack/wwwroot, each after the
 * `// ../<package>/dist/...` line esbuild writes; any other module (of a tsc output, of the CLI, of a
 * bundled library) has none.
 */
function bundledModules(text) {
  const out = [];
  let owner = null;
  let start = 0;
  for (const m of text.matchAll(/^\/\/ (?:\.\.\/(host|wwwroot)\/dist\/)?\S+\.[cm]?js$/gm)) {
    out.push([owner, text.slice(start, m.index)]);
    owner = m[1] ?? null;
    start = m.index;
  }
  out.push([owner, text.slice(start)]);
  return out;
}

function exportTargets(exports, out = {}) {
  if (typeof exports === 'string') out[exports] = exports;
  else if (exports && typeof exports === 'object') for (const v of Object.values(exports)) exportTargets(v, out);
  return out;
}

/** Starts `args` in the project and waits for a line matching `ready`; resolves with the child, its match and its output so far. */
async function start(command, args, ready, what) {
  const child = spawn(command, args, {
    cwd: project,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const match = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 30 s:\n${output}`)), 30_000);
    const onData = (d) => {
      output += d;
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before listening:\n${output}`)));
  });
  return { child, match, output: () => output };
}

/** SIGTERM, then the exit code. */
async function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

/** A WebSocket handshake on `path`: the status the host answers (101 when it upgrades). */
function upgradeStatus(url, path) {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, url), {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
      },
      timeout: 10_000,
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to a WebSocket handshake on ${path}`)));
    req.on('error', reject);
    req.end();
  });
}

/** Starts the compiled consumer on a free port and asks it for a module route, a static file, the loader, a socket and an upload. */
async function runConsumer(ack) {
  const { child, match, output } = await start(
    process.execPath,
    ['dist/main.js'],
    /listening on (http:\/\/\S+)/,
    'the consumer',
  );
  const url = match[1];
  step(`consumer host started from code on ${url}`);

  const hello = await fetch(`${url}/greeter/api/hello?name=release`);
  const body = await hello.json();
  if (hello.status !== 200 || body.greeting !== 'Hello, release')
    fail(`custom module route answered ${hello.status} ${JSON.stringify(body)}`);
  else step('custom module route answered: GET /greeter/api/hello -> 200');

  const missing = await fetch(`${url}/greeter/api/orders/42`);
  const problem = await missing.json();
  if (
    missing.status !== 404 ||
    !missing.headers.get('content-type')?.startsWith('application/problem+json') ||
    problem.code !== 'greeter.no_such_order'
  ) {
    fail(`a module's ProblemError answered ${missing.status} ${JSON.stringify(problem)}`);
  } else step('a module ProblemError became a problem+json 404');

  const page = await fetch(`${url}/index.html`);
  const html = await page.text();
  if (page.status !== 200 || !html.includes('ack embedded')) fail(`static file answered ${page.status}`);
  else step('static file answered: GET /index.html -> 200');

  const loader = await fetch(`${url}/wwwroot/api/loader/ack.loader.js`);
  if (loader.status !== 200 || !(await loader.text()).includes('AckLoader'))
    fail(`the loader served by the wwwroot module answered ${loader.status}`);
  else step('the wwwroot module serves the loader from the installed @ack/loader');

  // The live-reload socket (RunningEnvironment D): a WebSocket upgrade through the installed ws.
  const upgraded = await upgradeStatus(url, '/wwwroot/api/live-reload');
  if (upgraded !== 101) fail(`the live-reload WebSocket handshake answered ${upgraded}`);
  else step('a WebSocket handshake upgraded: GET /wwwroot/api/live-reload -> 101');

  // An upload through the installed ack command: the host's upload flow reads it with multer.
  const screen = path.join(work, 'hello.html');
  fs.writeFileSync(screen, '<h1>pushed by the release check</h1>');
  try {
    execFileSync(ack, ['sync', 'upload', screen, '--module', 'wwwroot', '--path', 'EMB/hello.html', '--url', url], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, ACK_SYNC_TOKEN: syncToken },
    });
    // Contract screens are served from <ContractBasePath>/<ApplicationID>/ (EMB) under /view/.
    const pushed = await fetch(`${url}/view/hello.html`);
    const text = await pushed.text();
    if (pushed.status !== 200 || !text.includes('pushed by the release check'))
      fail(`the uploaded screen answered ${pushed.status}`);
    else step('ack sync upload pushed a screen (through multer), served at /view/hello.html');
  } catch (err) {
    fail(`ack sync upload failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }

  const code = await stop(child);
  if (code !== 0) fail(`the consumer exited with ${code} on SIGTERM:\n${output()}`);
  else step('consumer stopped cleanly on SIGTERM');
}

/** The installed `ack serve --https-port` on the consumer home: a static file over HTTP/2 with the development certificate. */
async function runServeHttps(ack, ca) {
  const { child, match, output } = await start(
    ack,
    ['serve', '--app-dir', 'app', '--port', '0', '--https-port', '0'],
    /endpoint Https on (https:\/\/\S+) \(h2, http\/1\.1\)/,
    'ack serve --https-port',
  );
  const url = match[1];
  const session = http2.connect(url, { ca });
  try {
    const answer = await new Promise((resolve, reject) => {
      session.once('error', reject);
      const stream = session.request({ ':path': '/index.html' });
      let body = '';
      let status = 0;
      stream.on('response', (headers) => (status = headers[':status']));
      stream.setEncoding('utf8');
      stream.on('data', (d) => (body += d));
      stream.on('end', () => resolve({ status, body, alpn: session.alpnProtocol }));
      stream.on('error', reject);
    });
    if (answer.status !== 200 || answer.alpn !== 'h2' || !answer.body.includes('ack embedded'))
      fail(`ack serve --https-port answered ${answer.status} over ${answer.alpn}`);
    else
      step(
        `ack serve --https-port answered over HTTP/2 with the development certificate: GET ${url}/index.html -> 200`,
      );
  } finally {
    session.close();
  }
  const code = await stop(child);
  if (code !== 0) fail(`ack serve exited with ${code} on SIGTERM:\n${output()}`);
}

/**
 * @ack/host installed alone, as a library user installs it: the database packages are optional
 * peers, so they are not installed, and a store that needs one names the install line.
 */
function hostAlone(tarball) {
  const dir = path.join(work, 'host-alone');
  fs.mkdirSync(path.join(dir, 'home', 'app'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'host-alone', private: true, type: 'module' }),
  );
  execFileSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts', tarball],
    {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const modules = path.join(dir, 'node_modules');
  let bytes = 0;
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) bytes += fs.statSync(full).size;
    }
  };
  walk(modules);
  const packages = fs
    .readdirSync(modules)
    .filter((n) => !n.startsWith('.'))
    .flatMap((n) => (n.startsWith('@') ? fs.readdirSync(path.join(modules, n)) : [n])).length;
  const drivers = ['knex', 'mysql2', 'pg', 'redis', 'tedious'].filter((n) => fs.existsSync(path.join(modules, n)));
  if (drivers.length > 0) fail(`@ack/host alone installed ${drivers.join(', ')}: they should be optional peers`);
  else step(`@ack/host alone: ${packages} packages, ${(bytes / 1e6).toFixed(1)} MB, no database package`);
  fs.writeFileSync(
    path.join(dir, 'home', 'app', 'appsettings.json'),
    JSON.stringify({
      AppSettings: { SessionState: { CacheType: 'Redis', RedisConnectionString: '127.0.0.1:1' } },
      Serilog: { WriteTo: [] },
    }),
  );
  const script = `import { createHost } from '@ack/host';
try { await createHost({ appDir: 'home/app', logging: { quiet: true } }); console.log('started'); }
catch (err) { console.log(err.message); }`;
  const said = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
    encoding: 'utf8',
  }).trim();
  if (!said.includes('needs redis, which is not installed: npm install redis'))
    fail(`a Redis store on @ack/host alone said: ${said}`);
  else step('a Redis session store on @ack/host alone names the install line (npm install redis)');
}
