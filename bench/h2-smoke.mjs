// HTTP/2 static path smoke run (docs/benchmarks.md "HTTP/2 static path"): ack's HTTPS endpoint
// (a `Kestrel:Endpoints` https URL) beside a bare Node `http2` stream-API server (`stream.respond`
// then `end`, the ceiling) and Node's compatibility API, on the same certificate and file bytes,
// over TLS. Load: h2load `-c 16 -m 16`, pinned to CPU 1; servers pinned to CPU 0. Also the 4 MiB
// file over HTTP/2 and HTTP/1.1 (h2load --h1) from ack, in MB/s. Self-contained: builds its own
// files and certificate in a temporary folder. A smoke run on a shared machine: read the ratios.
//
//   pnpm build && node bench/h2-smoke.mjs
//   H2_SECONDS=3   seconds per measurement (after one second of warm-up)
//   H2_ROUNDS=3    rounds (the ratios are medians over rounds)
//   H2_ONLY=1k,304 only these cells (and 4m)
//   H2_PROFILE=dir ack writes a CPU profile (--cpu-prof) into dir when the run ends
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCertificate } from './lib/tls.mjs';

const self = fileURLToPath(import.meta.url);
const repo = path.resolve(path.dirname(self), '..');

if (process.argv[2] === 'serve-ack') await serveAck(process.argv[3]);
else if (process.argv[2] === 'serve-stream' || process.argv[2] === 'serve-compat')
  serveBare(process.argv[2], process.argv[3]);
else await main();

async function serveAck(work) {
  const { createHost } = await import(path.join(repo, 'packages/host/dist/index.js'));
  const { wwwrootModule } = await import(path.join(repo, 'packages/wwwroot/dist/index.js'));
  const host = await createHost({
    appDir: path.join(work, 'app'),
    modules: { wwwroot: wwwrootModule },
    logging: { quiet: true },
  });
  await host.listen({ port: 0, host: '127.0.0.1' });
  const tls = host.endpoints.find((e) => e.name === 'Bench').url;
  process.stdout.write(JSON.stringify({ url: tls, h1: host.url }) + '\n');
  process.on('SIGTERM', () => host.close({ graceMs: 200 }).then(() => process.exit(0)));
}

// The ceilings answer every cell from memory: the 1 KiB bytes, a 304 for a matching
// If-None-Match, a small 404 page for the miss path.
function serveBare(mode, work) {
  const body = fs.readFileSync(path.join(work, 'www/1k.txt'));
  const miss = Buffer.from('<!doctype html><title>404</title>');
  const etag = '"bench"';
  const answer = (p, inm) =>
    p === '/no-such-file.txt'
      ? { status: 404, type: 'text/html; charset=utf-8', body: miss }
      : inm === etag
        ? { status: 304 }
        : { status: 200, type: 'text/plain; charset=utf-8', body };
  const options = {
    key: fs.readFileSync(path.join(work, 'tls', 'key.pem')),
    cert: fs.readFileSync(path.join(work, 'tls', 'cert.pem')),
  };
  const server = http2.createSecureServer(options);
  if (mode === 'serve-stream') {
    server.on('stream', (stream, headers) => {
      const a = answer(headers[':path'], headers['if-none-match']);
      if (a.status === 304) return stream.respond({ ':status': 304, etag }, { endStream: true });
      stream.respond({ ':status': a.status, 'content-type': a.type, 'content-length': a.body.length, etag });
      stream.end(a.body);
    });
  } else {
    server.on('request', (req, res) => {
      const a = answer(req.url, req.headers['if-none-match']);
      if (a.status === 304) return res.writeHead(304, { etag }).end();
      res.writeHead(a.status, { 'content-type': a.type, 'content-length': a.body.length, etag }).end(a.body);
    });
  }
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ url: `https://127.0.0.1:${server.address().port}` }) + '\n');
  });
}

function prepare() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-h2-smoke-'));
  const write = (rel, data) => {
    const p = path.join(work, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
  };
  const letters = (n, seed) => Buffer.from(Array.from({ length: n }, (_, i) => 97 + ((i * 7 + seed) % 26)));
  write('www/1k.txt', letters(1024, 1));
  write('www/Mixed/CaseFile.txt', letters(1024, 3));
  write('www/4m.bin', Buffer.alloc(4 * 1024 * 1024, 7));
  write('shared/theme.css', letters(1024, 4));
  write(
    'config/shared_files.json',
    JSON.stringify({ items: [{ requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' }] }),
  );
  // The one bench certificate (bench/lib/tls.mjs), under work/tls/.
  benchCertificate(work);
  // The example's settings (security headers, CORS, sessions on), without the file log sink.
  const settings = JSON.parse(fs.readFileSync(path.join(repo, 'examples/basic/app/appsettings.json'), 'utf8'));
  settings.AppSettings.LoadModules = ['wwwroot'];
  settings.Serilog.WriteTo = [];
  settings.Kestrel.Endpoints = {
    Bench: { Url: 'https://127.0.0.1:0', Certificate: { Path: '../tls/cert.pem', KeyPath: '../tls/key.pem' } },
  };
  write('app/appsettings.json', JSON.stringify(settings));
  write(
    'modules/wwwroot/module.json',
    JSON.stringify({
      ModuleID: 'wwwroot',
      Name: 'wwwroot',
      Version: '1.0.0',
      ModuleConfig: {
        ContractRequestPath: 'view',
        ContractBasePath: '../contracts/wwwroot',
        WWWRootBasePath: '../www',
        SharedFileConfigPath: '../config/shared_files.json',
      },
    }),
  );
  return work;
}

function start(mode, work) {
  // H2_PROFILE=<dir>: ack writes a CPU profile there when it stops (docs/benchmarks.md).
  const profile =
    mode === 'serve-ack' && process.env.H2_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.H2_PROFILE}`] : [];
  const child = spawn('taskset', ['-c', '0', process.execPath, ...profile, self, mode, work], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve({ ...JSON.parse(line), child });
    });
    child.once('exit', (code) => reject(new Error(`${mode} exited with ${code}`)));
  });
}

function h2load(url, args) {
  const out = execFileSync('taskset', ['-c', '1', 'h2load', ...args, url], { encoding: 'utf8' });
  const rps = /finished in [^,]+, ([\d.]+) req\/s, ([\d.]+)([KMG]?B)\/s/.exec(out);
  const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!rps || !status) throw new Error(`h2load said:\n${out}`);
  const unit = { B: 1 / 2 ** 20, KB: 1 / 1024, MB: 1, GB: 1024 }[rps[3]];
  const requests = Number(/requests: \d+ total, \d+ started, (\d+) done/.exec(out)?.[1]);
  return { rps: Number(rps[1]), mbps: Number(rps[2]) * unit, statuses: status.slice(1).map(Number), requests };
}

async function main() {
  const seconds = Number(process.env.H2_SECONDS ?? 3);
  const rounds = Number(process.env.H2_ROUNDS ?? 3);
  const only = process.env.H2_ONLY?.split(',');
  const work = prepare();
  const servers = { ack: await start('serve-ack', work) };
  servers.stream = await start('serve-stream', work);
  servers.compat = await start('serve-compat', work);
  const ackEtag = await etagOf(servers.ack.url, '/1k.txt');
  const cells = [
    { id: '1k', path: '/1k.txt' },
    { id: '304', path: '/1k.txt', etag: true },
    { id: 'shared', path: '/shared/theme.css' },
    { id: 'ci', path: '/mIXED/casefile.TXT', bare: '/1k.txt' },
    { id: 'miss', path: '/no-such-file.txt' },
  ].filter((c) => !only || only.includes(c.id));
  const load = ['-c', '16', '-m', '16', '-D', String(seconds), '--warm-up-time=1'];
  // Each round measures ack right beside each ceiling; the ratio shown is the median over rounds
  // of the ratios within a round, since a busy machine drifts between runs far apart.
  console.log(`${rounds} round(s) of ${seconds} s; req/s are medians`);
  console.log(
    'cell     ack req/s   stream req/s   compat req/s   ack/stream   ack/compat   stream CPU per request / ack CPU per request',
  );
  for (const cell of cells) {
    const run = (name) => {
      const etag = name === 'ack' ? ackEtag : '"bench"';
      const extra = cell.etag ? ['-H', `if-none-match: ${etag}`] : [];
      const p = name === 'ack' ? cell.path : (cell.bare ?? cell.path);
      const before = cpuSeconds(servers[name].child.pid);
      const r = h2load(servers[name].url + p, [...load, ...extra]);
      // CPU time per request is steadier than req/s when other work shares CPU 0.
      r.cpuPerRequest = (cpuSeconds(servers[name].child.pid) - before) / r.requests;
      return r;
    };
    const figures = { ack: [], stream: [], compat: [], toStream: [], toCompat: [], cpuToStream: [] };
    for (let round = 0; round < rounds; round++) {
      const streamRun = run('stream');
      const stream = streamRun.rps;
      const ack = run('ack');
      const compat = run('compat').rps;
      figures.cpuToStream.push(streamRun.cpuPerRequest / ack.cpuPerRequest);
      if (ack.statuses.reduce((a, b) => a + b, 0) !== ack.statuses[cell.id === '304' ? 1 : cell.id === 'miss' ? 2 : 0])
        throw new Error(`${cell.id}: ack answered ${ack.statuses.join('/')} (2xx/3xx/4xx/5xx)`);
      figures.ack.push(ack.rps);
      figures.stream.push(stream);
      figures.compat.push(compat);
      figures.toStream.push(ack.rps / stream);
      figures.toCompat.push(ack.rps / compat);
    }
    const m = (key) => median(figures[key]);
    console.log(
      `${cell.id.padEnd(8)} ${m('ack').toFixed(0).padStart(9)}   ${m('stream').toFixed(0).padStart(12)}   ${m('compat').toFixed(0).padStart(12)}   ${m('toStream').toFixed(2).padStart(9)}x   ${m('toCompat').toFixed(2).padStart(9)}x   ${m('cpuToStream').toFixed(2).padStart(9)}x`,
    );
  }
  if (!only || only.includes('4m')) {
    // Windows as a browser opens them (Chromium: 6 MiB a stream, 15 MiB a connection), not h2load's 64 KiB.
    const big = ['-c', '4', '-m', '1', '-w', '22', '-W', '24', '-D', String(seconds), '--warm-up-time=1'];
    const overH2 = h2load(servers.ack.url + '/4m.bin', big);
    const overH1 = h2load(servers.ack.url + '/4m.bin', [...big, '--h1']);
    console.log(
      `4m       ack HTTP/2 ${overH2.mbps.toFixed(0)} MB/s, ack HTTP/1.1 (TLS) ${overH1.mbps.toFixed(0)} MB/s: ${(overH2.mbps / overH1.mbps).toFixed(2)}x`,
    );
  }
  await Promise.all(
    Object.values(servers).map((s) => new Promise((resolve) => s.child.once('exit', resolve).kill('SIGTERM'))),
  );
  fs.rmSync(work, { recursive: true, force: true });
}

/** User and system CPU seconds of a process so far (Linux). */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function etagOf(base, p) {
  const client = http2.connect(base, { rejectUnauthorized: false });
  try {
    return await new Promise((resolve, reject) => {
      const req = client.request({ ':path': p });
      req.once('response', (headers) => resolve(headers.etag));
      req.once('error', reject);
      req.resume();
    });
  } finally {
    client.close();
  }
}
