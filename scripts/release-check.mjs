#!/usr/bin/env node
// The release check (docs/releasing.md): packs @ack/host, @ack/wwwroot, @ack/loader and @ack/cli as
// they would be published, checks what each tarball holds, installs them with npm into an empty
// project outside this repository, compiles examples/embed there with a strict tsc, starts it and
// asks it for a custom module's route and a static file, and runs the installed `ack` command.
// It expects built packages (`pnpm release:check` builds first). Exit code 0 when every check
// passed, 1 otherwise; `--keep` leaves the temporary project for a look.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
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
let child;

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
  const started = Date.now();
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts'], {
    cwd: project,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  step(`npm install into an empty project: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const name of PACKAGES) {
    const installed = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', '@ack', name, 'package.json'), 'utf8'));
    if (installed.version !== JSON.parse(fs.readFileSync(path.join(repo, 'packages', name, 'package.json'), 'utf8')).version) {
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

  if (fs.existsSync(path.join(project, 'dist', 'main.js'))) await runConsumer();

  const ack = path.join(project, 'node_modules', '.bin', 'ack');
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
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
} finally {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (keep) step(`kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
}

if (problems.length > 0) {
  step(`${problems.length} problem(s)`);
  process.exit(1);
}
step('all checks passed');

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
    if (/(^|\/)(test-support|__tests__)\//.test(p) || /\.test\.[cm]?[jt]s(\.map)?$/.test(p) || /test-fixture/.test(p) || /tsbuildinfo$/.test(p)) {
      fail(`@ack/${name}: ships ${p}, which is for this repository's tests`);
    }
  }
  for (const target of Object.values(exportTargets(manifest.exports))) {
    if (!files.has(target.replace(/^\.\//, ''))) fail(`@ack/${name}: exports name ${target}, which is not in the tarball`);
  }
  for (const bin of Object.values(manifest.bin ?? {})) {
    if (!files.has(bin.replace(/^\.\//, ''))) fail(`@ack/${name}: bin ${bin} is not in the tarball`);
  }
  // Every source map must point at sources that ship, or a debugger shows nothing.
  const maps = listing.filter((p) => p.endsWith('.map'));
  if (maps.length > 0) {
    const unpacked = path.join(packs, `unpacked-${name}`);
    fs.mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', file, '-C', unpacked]);
    for (const map of maps) {
      const { sources = [] } = JSON.parse(fs.readFileSync(path.join(unpacked, 'package', map), 'utf8'));
      for (const source of sources) {
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(map), source));
        if (!files.has(resolved)) fail(`@ack/${name}: ${map} points at ${resolved}, which is not in the tarball`);
      }
    }
  }
}

function exportTargets(exports, out = {}) {
  if (typeof exports === 'string') out[exports] = exports;
  else if (exports && typeof exports === 'object') for (const v of Object.values(exports)) exportTargets(v, out);
  return out;
}

/** Starts the compiled consumer on a free port and asks it for a module route and a static file. */
async function runConsumer() {
  child = spawn(process.execPath, ['dist/main.js'], { cwd: project, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the consumer did not start in 30 s:\n${output}`)), 30_000);
    const onData = (d) => {
      output += d;
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the consumer exited (${code}) before listening:\n${output}`)));
  });
  step(`consumer host started from code on ${url}`);

  const hello = await fetch(`${url}/greeter/api/hello?name=release`);
  const body = await hello.json();
  if (hello.status !== 200 || body.greeting !== 'Hello, release') fail(`custom module route answered ${hello.status} ${JSON.stringify(body)}`);
  else step('custom module route answered: GET /greeter/api/hello -> 200');

  const missing = await fetch(`${url}/greeter/api/orders/42`);
  const problem = await missing.json();
  if (missing.status !== 404 || !missing.headers.get('content-type')?.startsWith('application/problem+json') || problem.code !== 'greeter.no_such_order') {
    fail(`a module's ProblemError answered ${missing.status} ${JSON.stringify(problem)}`);
  } else step('a module ProblemError became a problem+json 404');

  const page = await fetch(`${url}/index.html`);
  const html = await page.text();
  if (page.status !== 200 || !html.includes('ack embedded')) fail(`static file answered ${page.status}`);
  else step('static file answered: GET /index.html -> 200');

  const loader = await fetch(`${url}/wwwroot/api/loader/ack.loader.js`);
  if (loader.status !== 200 || !(await loader.text()).includes('AckLoader')) fail(`the loader served by the wwwroot module answered ${loader.status}`);
  else step('the wwwroot module serves the loader from the installed @ack/loader');

  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) fail(`the consumer exited with ${code} on SIGTERM:\n${output}`);
  else step('consumer stopped cleanly on SIGTERM');
}
