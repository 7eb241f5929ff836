// `pnpm bench`: our host (built packages/*/dist) side by side with the same host as
// `ack serve --workers 2` (docs/scale-out.md), plain Express 5 + express.static and nginx (one
// worker), all on loopback and serving the same files, measured with autocannon at 64 connections.
// Prints a table with our/peer ratios and writes docs/benchmarks.md.
//
//   BENCH_DURATION=5   seconds per measurement (after a 1 s warm-up)
//   BENCH_NO_DOCS=1    do not rewrite docs/benchmarks.md
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const work = path.join(here, '.work');
const home = path.join(work, 'home');
const www = path.join(home, 'www');
const DURATION = Number(process.env.BENCH_DURATION ?? 4);
// Each measurement is taken this many times, the servers in alternating order, and the best kept:
// the machine is shared, and the best of a few short runs is the least disturbed by other work.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 64;
const TREE_DIRS = 50;
const TREE_FILES_PER_DIR = 100;
const RSS_REQUESTS = 100_000;
const RSS_SAMPLES = 10;

// ---------------------------------------------------------------- files
function prepareFiles() {
  fs.rmSync(work, { recursive: true, force: true });
  const write = (rel, data) => {
    const p = path.join(home, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
    return p;
  };
  const text = (n, seed) => Buffer.from(Array.from({ length: n }, (_, i) => 97 + ((i * 7 + seed) % 26)));
  write('www/index.html', '<!doctype html><title>bench</title><h1>bench</h1>');
  write('www/1k.txt', text(1024, 1));
  write('www/16k.txt', text(16 * 1024, 2));
  write('www/Mixed/CaseFile.txt', text(1024, 3));
  write('www/4m.bin', Buffer.alloc(4 * 1024 * 1024, 7));
  const tree = [];
  for (let d = 0; d < TREE_DIRS; d++) {
    for (let f = 0; f < TREE_FILES_PER_DIR; f++) {
      const rel = `tree/d${d}/f${f}.txt`;
      write(`www/${rel}`, text(256 + ((d * 31 + f) % 768), d + f));
      tree.push(`/${rel}`);
    }
  }
  const sharedFile = write('shared/theme.css', text(1024, 4));
  const items = [
    { requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' },
    { requestPath: '/shared/app-init.js', hostFilePath: '../shared/app-init.js' },
    { requestPath: '/shared/settings.json', hostFilePath: '../shared/settings.json' },
    { requestPath: '/shared/notice.html', hostFilePath: '../shared/notice.html' },
    { requestPath: '/shared/readme.md', hostFilePath: '../shared/readme.md' },
    { requestPath: '/shared/terms.txt', hostFilePath: '../shared/terms.txt' },
  ];
  write('config/shared_files.json', JSON.stringify({ items }, null, 2));
  const manifestJson = JSON.stringify(items.map((i) => ({ requestPath: i.requestPath })));
  const manifestFile = write('manifest.json', manifestJson);
  // The example's settings (security headers, CORS, sessions on), without the file log sink.
  const example = JSON.parse(fs.readFileSync(path.join(repo, 'examples/basic/app/appsettings.json'), 'utf8'));
  example.AppSettings.LoadModules = ['wwwroot'];
  example.Serilog.WriteTo = [];
  write('app/appsettings.json', JSON.stringify(example, null, 2));
  write('modules/wwwroot/module.json', JSON.stringify({
    ModuleID: 'wwwroot', Name: 'wwwroot', Version: '1.0.0',
    ModuleConfig: { ContractRequestPath: 'view', ContractBasePath: '../contracts/wwwroot', WWWRootBasePath: '../www', SharedFileConfigPath: '../config/shared_files.json' },
  }, null, 2));
  return { tree, sharedFile, manifestJson, manifestFile };
}

// ---------------------------------------------------------------- servers
function startNode(name, script, args, nodeFlags = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    const lines = readline.createInterface({ input: child.stdout });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening`)));
    lines.once('line', (line) => {
      const { url } = JSON.parse(line);
      resolve({ name, url, pid: child.pid, child, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** `ack serve --workers 2` (the built CLI) over the bench home; ready once both workers listen. */
async function startAckWorkers(appDir) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repo, 'packages/cli/dist/bin.js'), 'serve', '--app-dir', appDir, '--port', String(port), '--host', '127.0.0.1', '--workers', '2'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`ack --workers 2 exited (${code}) before listening: ${stderr}`)));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if ((stderr.match(/worker \d+ listening/g) ?? []).length >= 2) resolve();
    });
  });
  return { name: 'ack-w2', url: `http://127.0.0.1:${port}`, pid: child.pid, child, stop: () => stopChild(child) };
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function nginxBinary() {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(p)) return p;
  return undefined;
}

function nginxVersion(bin) {
  // `nginx -v` prints "nginx version: nginx/1.22.1" on stderr.
  const out = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  return `${out.stderr ?? ''}${out.stdout ?? ''}`.trim().replace(/^nginx version:\s*/, '') || undefined;
}

async function startNginx(bin, files) {
  const dir = path.join(work, 'nginx');
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = `worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log ${dir}/access.log combined buffer=64k flush=1s;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 120s;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port};
    root ${www};
    location = /shared/theme.css { alias ${files.sharedFile}; }
    location = /shared-files/manifest { default_type application/json; add_header Cache-Control no-cache; alias ${files.manifestFile}; }
  }
}
`;
  const confFile = path.join(dir, 'nginx.conf');
  fs.writeFileSync(confFile, conf);
  const child = spawn(bin, ['-c', confFile, '-p', dir, '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${url}/1k.txt`);
      return { name: 'nginx', url, pid: child.pid, stop: () => stopChild(child) };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`nginx did not start: ${stderr}`);
}

// ---------------------------------------------------------------- measuring
function run(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, pipelining: 1, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function measure(server, scenario, warmUp) {
  const target = scenario.pathFor(server);
  const headers = await scenario.headersFor?.(server, target);
  const opts = { url: server.url + target, headers };
  if (warmUp) await run({ ...opts, duration: 1 });
  const r = await run({ ...opts, duration: DURATION });
  const statuses = Object.keys(r.statusCodeStats ?? {}).map(Number);
  const wrong = statuses.filter((s) => s !== scenario.status);
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    mbps: r.throughput.average / 1e6,
    problems: [
      ...(wrong.length ? [`unexpected status ${wrong.join(',')}`] : []),
      ...(r.errors ? [`${r.errors} errors`] : []),
      ...(r.timeouts ? [`${r.timeouts} time-outs`] : []),
    ],
  };
}

function rssKiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  }
}

function memoryOf(server) {
  const rssMiB = rssKiB(server.pid) / 1024;
  return new Promise((resolve) => {
    server.child.once('message', ({ after }) => resolve({ rssMiB, gcRssMiB: after.rss / 2 ** 20, heapMiB: after.heapUsed / 2 ** 20 }));
    server.child.send('memory');
  });
}

async function memoryRun(server, tree) {
  const samples = [{ requests: 0, ...(await memoryOf(server)) }];
  let next = 0;
  const chunk = RSS_REQUESTS / RSS_SAMPLES;
  let ok = 0;
  let other = 0;
  for (let i = 1; i <= RSS_SAMPLES; i++) {
    const r = await run({
      url: server.url,
      amount: chunk,
      requests: [{ setupRequest: (req) => ({ ...req, path: tree[next++ % tree.length] }) }],
    });
    for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) {
      if (code === '200') ok += count;
      else other += count;
    }
    samples.push({ requests: i * chunk, ...(await memoryOf(server)) });
  }
  return { samples, ok, other };
}

// ---------------------------------------------------------------- scenarios
const exact = () => '/Mixed/CaseFile.txt';
const scenarios = [
  { id: '1k', label: '1 KiB static file', pathFor: () => '/1k.txt', status: 200, goal: 0.5 },
  { id: '16k', label: '16 KiB static file', pathFor: () => '/16k.txt', status: 200 },
  {
    id: 'ci', label: 'case-insensitive hit', status: 200, goal: 0.5,
    // Peers have no case-insensitive lookup: they serve the file by its exact name.
    pathFor: (s) => (s.name.startsWith('ack') ? '/mIXED/casefile.TXT' : exact()),
  },
  {
    id: '304', label: '304 revalidation (If-None-Match)', pathFor: () => '/1k.txt', status: 304, goal: 0.5,
    headersFor: async (s, p) => ({ 'if-none-match': (await fetch(s.url + p)).headers.get('etag') }),
  },
  { id: 'shared', label: 'shared file', pathFor: () => '/shared/theme.css', status: 200, goal: 0.5 },
  { id: 'manifest', label: 'manifest', pathFor: () => '/shared-files/manifest', status: 200 },
  { id: 'miss', label: 'miss (404)', pathFor: () => '/no-such-file.txt', status: 404, goal: 0.3 },
  { id: '4m', label: '4 MiB file (MB/s)', pathFor: () => '/4m.bin', status: 200, throughput: true },
];

// ---------------------------------------------------------------- main
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '–');

async function main() {
  for (const dist of ['packages/host/dist/index.js', 'packages/wwwroot/dist/index.js', 'packages/cli/dist/bin.js']) {
    if (!fs.existsSync(path.join(repo, dist))) throw new Error(`${dist} is missing: run pnpm build (pnpm bench does)`);
  }
  console.log('bench: preparing files…');
  const files = prepareFiles();
  const servers = [];
  const notes = [];
  try {
    servers.push(await startNode('ack', path.join(here, 'servers/ack.mjs'), [path.join(home, 'app')], ['--expose-gc']));
    servers.push(await startAckWorkers(path.join(home, 'app')));
    servers.push(await startNode('express', path.join(here, 'servers/express-static.mjs'), [www, files.sharedFile, files.manifestJson]));
    const bin = nginxBinary();
    let nginxVer = 'not installed';
    if (bin) {
      nginxVer = nginxVersion(bin) ?? 'unknown';
      try {
        servers.push(await startNginx(bin, files));
      } catch (err) {
        notes.push(`nginx could not start (${err.message.split('\n')[0]}); its columns are empty.`);
      }
    } else {
      notes.push('nginx is not installed (Debian package nginx-light): its columns are empty.');
    }
    for (const n of notes) console.log(`bench: ${n}`);
    console.log(`bench: servers ${servers.map((s) => `${s.name} ${s.url}`).join(', ')}; ${DURATION} s per measurement, ${CONNECTIONS} connections`);

    const rows = [];
    for (const scenario of scenarios) {
      const row = { scenario, results: {} };
      const metric = (r) => (scenario.throughput ? r.mbps : r.rps);
      for (let round = 0; round < ROUNDS; round++) {
        for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
          const r = await measure(server, scenario, round === 0);
          const best = row.results[server.name];
          if (!best || metric(r) > metric(best) || r.problems.length > best.problems.length) {
            row.results[server.name] = { ...r, problems: [...new Set([...(best?.problems ?? []), ...r.problems])] };
          }
          console.log(`  ${scenario.label.padEnd(34)} ${server.name.padEnd(8)} ${scenario.throughput ? `${fmt(r.mbps, 1)} MB/s` : `${fmt(r.rps)} req/s`}  p99 ${r.p99} ms${r.problems.length ? `  (${r.problems.join('; ')})` : ''}`);
        }
      }
      rows.push(row);
    }

    console.log(`bench: memory: ${RSS_REQUESTS.toLocaleString('en-US')} requests across ${files.tree.length.toLocaleString('en-US')} files…`);
    const memory = await memoryRun(servers[0], files.tree);
    console.log(`  RSS MiB: ${memory.samples.map((s) => s.rssMiB.toFixed(1)).join(' → ')}`);
    console.log(`  after a full GC: RSS ${memory.samples.map((s) => s.gcRssMiB.toFixed(1)).join(' → ')}; heap ${memory.samples.map((s) => s.heapMiB.toFixed(1)).join(' → ')}`);

    const table = renderTable(rows, servers.map((s) => s.name));
    console.log('\n' + table + '\n');
    if (!process.env.BENCH_NO_DOCS) {
      fs.writeFileSync(path.join(repo, 'docs/benchmarks.md'), renderDoc({ table, memory, notes, nginxVer, rows, files }));
      console.log('bench: wrote docs/benchmarks.md');
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

function renderTable(rows, names) {
  const peers = names.filter((n) => n !== 'ack');
  const head = ['scenario', ...names.map((n) => `${n}`), ...peers.map((p) => `ack/${p}`), 'goal (ack/nginx)'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const { scenario, results } of rows) {
    const value = (r) => (scenario.throughput ? `${fmt(r.mbps, 1)} MB/s` : `${fmt(r.rps)} req/s, p99 ${r.p99} ms`) + (r.problems.length ? ` ⚠ ${r.problems.join('; ')}` : '');
    const metric = (r) => (scenario.throughput ? r.mbps : r.rps);
    const ratios = peers.map((p) => (results[p] ? `${fmt(metric(results.ack) / metric(results[p]), 2)}x` : '–'));
    let goal = '';
    if (scenario.goal) {
      const ratio = results.nginx ? metric(results.ack) / metric(results.nginx) : NaN;
      goal = `≥ ${scenario.goal}x: ${Number.isFinite(ratio) ? (ratio >= scenario.goal ? 'met' : 'NOT met') : 'no nginx'}`;
    }
    lines.push(`| ${scenario.label} | ${names.map((n) => value(results[n])).join(' | ')} | ${ratios.join(' | ')} | ${goal} |`);
  }
  return lines.join('\n');
}

function renderDoc({ table, memory, notes, nginxVer, files }) {
  const cpus = os.cpus();
  const acVersion = JSON.parse(fs.readFileSync(path.join(repo, 'node_modules/autocannon/package.json'), 'utf8')).version;
  const spread = (key) => {
    const warm = memory.samples.slice(2).map((s) => s[key]);
    return Math.max(...warm) - Math.min(...warm);
  };
  return `# Benchmarks

Generated by \`pnpm bench\` (\`bench/run.mjs\`); rerun it to refresh this page. Our host (the built
\`createHost\` + \`wwwroot\` module, with the example's settings: security headers, CORS, sessions
on) runs side by side with the same host as \`ack serve --workers 2\` (\`ack-w2\`: two worker
processes behind one port, scale-out.md), a plain Express 5 + \`express.static\` server and nginx
with one worker, all on loopback, serving the same files (a 1 KiB, a 16 KiB and a 4 MiB file, a 5,000-file tree,
a shared file and the manifest). The load generator is autocannon ${acVersion}, ${CONNECTIONS}
connections, ${DURATION} s per measurement after a 1 s warm-up, in the same process that drives
the run; it shares the machine's cores with the server under test, as the goals assume. Each
figure is the best of ${ROUNDS} measurements taken with the servers in alternating order (the
machine is shared; the best of a few short runs is the one least disturbed by other work).

- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
- Machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}
- Node ${process.version}; ${nginxVer.startsWith('nginx/') ? nginxVer : `nginx ${nginxVer}`}; Express ${expressVersion()}
${notes.map((n) => `- Note: ${n}\n`).join('')}
## Requests per second and p99 latency

${table}

\`ack-w2\` shows what a second worker buys on this machine: the load generator runs on the same
cores, so on a two-core machine the workers share them with it (and with each other); the ratio
\`ack/ack-w2\` below 1 is the gain.

The case-insensitive hit asks our host for \`/mIXED/casefile.TXT\` (the file is \`Mixed/CaseFile.txt\`);
the peers have no case-insensitive lookup, so they are asked for the exact name. The manifest is a
fixed file for nginx and a fixed string for Express. The miss is a path that names no file: our
host answers it with its 404 page after the edge, public and static phases.

## Memory of our host

${RSS_REQUESTS.toLocaleString('en-US')} requests across the ${files.tree.length.toLocaleString('en-US')}-file tree
(each file in turn, ${CONNECTIONS} connections), resident set size sampled every
${(RSS_REQUESTS / RSS_SAMPLES).toLocaleString('en-US')} requests (${memory.ok.toLocaleString('en-US')} answered 200${memory.other ? `, ${memory.other} otherwise` : ''}):

| requests | ${memory.samples.map((s) => s.requests.toLocaleString('en-US')).join(' | ')} |
|---|${memory.samples.map(() => '---').join('|')}|
| RSS MiB, as sampled | ${memory.samples.map((s) => s.rssMiB.toFixed(1)).join(' | ')} |
| RSS MiB, after a full GC | ${memory.samples.map((s) => s.gcRssMiB.toFixed(1)).join(' | ')} |
| JS heap used MiB, after a full GC | ${memory.samples.map((s) => s.heapMiB.toFixed(1)).join(' | ')} |

After warm-up (from ${(memory.samples[2]?.requests ?? 0).toLocaleString('en-US')} requests on) the live heap moves within
${spread('heapMiB').toFixed(1)} MiB and RSS after a full GC within ${spread('gcRssMiB').toFixed(1)} MiB. The first row drifts up
between samples only by garbage V8 has not yet collected (the bench asks the host for a full
collection, \`--expose-gc\`, after reading that row, so each sample starts the next chunk clean).
Memory is bounded by design: at most 20,000 remembered URLs, 20,000 file facts, 5,000 folder
listings and 32 MiB of small files' bytes (see docs/static-files.md).

## Where the time goes

A CPU profile of our host serving the 1 KiB file (\`node --cpu-prof\`, 64 connections) shows about
a quarter of its time in the kernel's \`writev\` (one per response: headers and body leave in one
write), about a tenth in the one \`stat\` that validates the file (so a changed file is served new on
the next request), and most of the rest in Node's HTTP parser and response machinery. The host's
edge phase (request id, security headers, CORS) and the wwwroot handler (a \`Map\` lookup of the
URL, the stat, a few \`setHeader\` calls, \`res.end(bytes)\`) are a few percent each; a fifth of the
time the server sits idle waiting for the load generator, which shares the two cores.

The miss used to reach Express after the static phase, where \`express-session\` minted a session
id (random bytes and an HMAC) for every request without a cookie, and the sign-in phase parsed
cookies: about 2,200 requests/s. The host now answers a GET or HEAD outside every route prefix that
no static handler answered with its 404 page directly (nothing in the Express phases could have
answered it), which is the figure above. API requests without a session cookie still pay for a
minted session id when \`IsSession\` is on; a lazily created session would remove that cost.

## How to read and rerun

\`pnpm bench\` builds the packages, then runs \`node bench/run.mjs\`. \`BENCH_DURATION=10\` measures
longer, \`BENCH_ROUNDS=3\` repeats each measurement more; \`BENCH_NO_DOCS=1\` leaves this page alone. Figures move with whatever else runs on the
machine; compare ratios from one run rather than absolute numbers across runs.
`;
}

function expressVersion() {
  try {
    const pkg = path.join(repo, 'packages/host/node_modules/express/package.json');
    return JSON.parse(fs.readFileSync(pkg, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err.stack ?? err}`);
  process.exitCode = 1;
});
