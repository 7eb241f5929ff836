// `pnpm bench:fault`: load and faults at once, bounded in count and time (docs/reliability.md).
// The built host (bench/servers/ack.mjs) serves a throw-away home while
//   - well-behaved clients send FAULT_REQUESTS mixed requests over FAULT_CONNECTIONS keep-alive
//     connections: static files, shared files, the manifest, helper APIs and sync uploads;
//   - FAULT_STALLED sockets from another loopback address send upload headers and part of the body,
//     then nothing (re-opened whenever the host cuts one, so that as many stay held);
//   - uploads are aborted mid-body, from a third loopback address.
// It reports the 5xx answers and the resets seen by well-behaved clients (both must be 0), the
// temporary files left in the home afterwards (must be 0), and the host's RSS before and after.
//
//   FAULT_REQUESTS=20000 FAULT_CONNECTIONS=64 FAULT_STALLED=200 FAULT_TIME_LIMIT=180 (seconds)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isTemporaryFileName } from '../packages/host/dist/entries/serving.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const work = path.join(here, '.work-fault');
const home = path.join(work, 'home');
const REQUESTS = Number(process.env.FAULT_REQUESTS ?? 20_000);
const CONNECTIONS = Number(process.env.FAULT_CONNECTIONS ?? 64);
const STALLED = Number(process.env.FAULT_STALLED ?? 200);
const TIME_LIMIT_MS = Number(process.env.FAULT_TIME_LIMIT ?? 180) * 1000;
const TOKEN = 'bench-sync-token';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const UPLOAD_BYTES = 64 * 1024;

// ---------------------------------------------------------------- home
function prepareHome() {
  fs.rmSync(work, { recursive: true, force: true });
  const write = (rel, data) => {
    const p = path.join(home, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
  };
  const text = (n, seed) => Buffer.from(Array.from({ length: n }, (_, i) => 97 + ((i * 7 + seed) % 26)));
  write('www/index.html', '<!doctype html><title>fault</title>');
  write('www/1k.txt', text(1024, 1));
  write('www/16k.txt', text(16 * 1024, 2));
  for (let i = 0; i < 50; i++) write(`www/tree/f${i}.txt`, text(300 + i * 10, i));
  write('shared/theme.css', text(2048, 3));
  write('shared/app.js', text(4096, 4));
  write(
    'config/shared_files.json',
    JSON.stringify({
      items: [
        { requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' },
        { requestPath: '/shared/app.js', hostFilePath: '../shared/app.js' },
      ],
    }),
  );
  write('contracts/wwwroot/HDS/page.html', '<p>v1</p>');
  // The example's settings (security headers, CORS, sessions on), without log sinks.
  const settings = JSON.parse(fs.readFileSync(path.join(repo, 'examples/basic/app/appsettings.json'), 'utf8'));
  settings.AppSettings.LoadModules = ['wwwroot'];
  settings.Serilog.WriteTo = [];
  write('app/appsettings.json', JSON.stringify(settings, null, 2));
  write(
    'modules/wwwroot/module.json',
    JSON.stringify(
      {
        ModuleID: 'wwwroot',
        Version: '1.0.0',
        ModuleConfig: {
          ContractBasePath: '../contracts/wwwroot',
          WWWRootBasePath: '../www',
          SharedFileConfigPath: '../config/shared_files.json',
          FileSyncTokens: [TOKEN],
        },
      },
      null,
      2,
    ),
  );
}

function temporaryFilesLeft() {
  return fs
    .readdirSync(home, { recursive: true, encoding: 'utf8' })
    .filter((f) => isTemporaryFileName(path.basename(f)));
}

// ---------------------------------------------------------------- host
function startHost() {
  // The bench's host script reads its application folder from a layout file.
  const layoutFile = path.join(work, 'layout.json');
  fs.writeFileSync(layoutFile, JSON.stringify({ app: path.join(home, 'app') }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(here, 'servers/ack.mjs'), layoutFile], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child.once('exit', (code) => reject(new Error(`host exited (${code}) before listening`)));
    readline
      .createInterface({ input: child.stdout })
      .once('line', (line) => resolve({ child, url: JSON.parse(line).url }));
  });
}

function memory(child) {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m.after));
    child.send('memory');
  });
}

// ---------------------------------------------------------------- requests
function multipart(fields, fileBytes) {
  const boundary = `----fault${Math.random().toString(16).slice(2)}`;
  const head =
    Object.entries(fields)
      .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
      .join('') +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.html"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    head: Buffer.from(head),
    file: Buffer.alloc(fileBytes, 0x61),
    tail: Buffer.from(tail),
  };
}

const MIX = [
  [40, (i) => ({ path: ['/1k.txt', '/16k.txt', '/index.html', `/tree/f${i % 50}.txt`, '/TREE/F1.TXT'][i % 5] })],
  [15, (i) => ({ path: i % 2 ? '/shared/theme.css' : '/shared/app.js' })],
  [15, () => ({ path: '/shared-files/manifest' })],
  [
    20,
    (i) => ({
      path: [
        '/wwwroot/api/index/guid',
        '/wwwroot/api/index/id?count=3',
        '/wwwroot/api/index/sha256hash?text=x',
        '/wwwroot/api/index/check-id?requestID=x',
      ][i % 4],
    }),
  ],
  [
    10,
    (i) => {
      const form = multipart(
        { moduleName: 'wwwroot', changeType: 'Changed', filePath: `HDS/bench-${i % 20}.html` },
        UPLOAD_BYTES,
      );
      return {
        path: '/wwwroot/api/sync/upload',
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': form.type },
        body: Buffer.concat([form.head, form.file, form.tail]),
      };
    },
  ],
];
const pick = (i) => {
  let n = i % 100;
  for (const [weight, make] of MIX) {
    if (n < weight) return make(i);
    n -= weight;
  }
  return MIX[0][1](i);
};

function send(agent, base, r) {
  return new Promise((resolve) => {
    const req = http.request(
      `${base}${r.path}`,
      {
        agent,
        method: r.method ?? 'GET',
        headers: { ...r.headers, ...(r.body ? { 'content-length': r.body.length } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode }));
        res.on('error', (err) => resolve({ error: err.code ?? err.message }));
      },
    );
    req.on('error', (err) => resolve({ error: err.code ?? err.message }));
    req.end(r.body);
  });
}

async function wellBehaved(base, count, deadline) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const statuses = new Map();
  const errors = new Map();
  let next = 0;
  const worker = async () => {
    while (next < count && Date.now() < deadline) {
      const outcome = await send(agent, base, pick(next++));
      if (outcome.error) errors.set(outcome.error, (errors.get(outcome.error) ?? 0) + 1);
      else statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  agent.destroy();
  return { statuses, errors, sent: next };
}

// ---------------------------------------------------------------- faults
function localAddress(preferred) {
  // Linux answers on all of 127/8; elsewhere the faults come from 127.0.0.1 too.
  return process.platform === 'linux' ? preferred : undefined;
}

function stalledSockets(port, target, stop) {
  const stats = { opened: 0, cutByHost: 0, answered408: 0, held: 0 };
  const form = multipart({ moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/stalled.html' }, 1024 * 1024);
  const total = form.head.length + form.file.length + form.tail.length;
  const open = () => {
    if (stop.done) return;
    stats.opened++;
    stats.held++;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: localAddress('127.0.0.2') });
    let text = '';
    socket.on('connect', () => {
      socket.write(
        `POST /wwwroot/api/sync/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH}\r\nContent-Type: ${form.type}\r\nContent-Length: ${total}\r\n\r\n`,
      );
      socket.write(Buffer.concat([form.head, form.file.subarray(0, 1000)]));
    });
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      stats.held--;
      if (!stop.done) {
        stats.cutByHost++;
        if (text.startsWith('HTTP/1.1 408')) stats.answered408++;
        setTimeout(open, 50);
      }
    });
    stop.sockets.add(socket);
  };
  for (let i = 0; i < target; i++) setTimeout(open, i * 5);
  return stats;
}

function abortedUploads(port, stop) {
  const stats = { started: 0 };
  const round = () => {
    if (stop.done) return;
    stats.started++;
    const form = multipart(
      { moduleName: 'wwwroot', changeType: 'Changed', filePath: `HDS/aborted-${stats.started % 10}.html` },
      2 * 1024 * 1024,
    );
    const total = form.head.length + form.file.length + form.tail.length;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: localAddress('127.0.0.3') });
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(
        `POST /wwwroot/api/sync/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH}\r\nContent-Type: ${form.type}\r\nContent-Length: ${total}\r\n\r\n`,
      );
      socket.write(Buffer.concat([form.head, form.file.subarray(0, 512 * 1024)]));
      setTimeout(() => socket.destroy(), 30);
    });
    setTimeout(round, 100);
  };
  round();
  return stats;
}

// ---------------------------------------------------------------- run
const started = Date.now();
const deadline = started + TIME_LIMIT_MS;
prepareHome();
const { child, url } = await startHost();
const port = Number(new URL(url).port);
const hardStop = setTimeout(() => {
  console.error(`time limit of ${TIME_LIMIT_MS / 1000} s reached: stopping`);
  child.kill('SIGKILL');
  process.exit(2);
}, TIME_LIMIT_MS + 30_000);
hardStop.unref();

await wellBehaved(url, 500, deadline); // warm-up
const rssBefore = await memory(child);
const stop = { done: false, sockets: new Set() };
const stalled = stalledSockets(port, STALLED, stop);
const aborted = abortedUploads(port, stop);
await new Promise((r) => setTimeout(r, 1500)); // let the stalled sockets open
const heldAtStart = stalled.held;
const load = await wellBehaved(url, REQUESTS, deadline);
const heldAtEnd = stalled.held;
stop.done = true;
for (const s of stop.sockets) s.destroy();
// The host removes an aborted upload's temporary file when it sees the connection close.
await new Promise((r) => setTimeout(r, 1500));
const rssAfter = await memory(child);
const left = temporaryFilesLeft();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));

const count = (map, pred) => [...map].filter(([k]) => pred(k)).reduce((n, [, v]) => n + v, 0);
const fivexx = count(load.statuses, (s) => s >= 500);
const resets = [...load.errors.values()].reduce((a, b) => a + b, 0);
const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const report = {
  requests: load.sent,
  connections: CONNECTIONS,
  seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
  statuses: Object.fromEntries([...load.statuses].sort((a, b) => a[0] - b[0])),
  fivexx,
  resetsForWellBehavedClients: resets,
  errors: Object.fromEntries(load.errors),
  stalledSockets: {
    target: STALLED,
    heldAtStart,
    heldAtEnd,
    opened: stalled.opened,
    cutByHost: stalled.cutByHost,
    answered408: stalled.answered408,
  },
  abortedUploads: aborted.started,
  temporaryFilesLeft: left.length,
  rss: { before: mb(rssBefore.rss), after: mb(rssAfter.rss) },
  heapUsedAfterGc: { before: mb(rssBefore.heapUsed), after: mb(rssAfter.heapUsed) },
};
console.log(JSON.stringify(report, null, 2));
const ok = fivexx === 0 && resets === 0 && left.length === 0 && load.sent >= REQUESTS;
console.log(ok ? 'PASS: no 5xx, no resets for well-behaved clients, no temporary files left' : 'FAIL');
process.exit(ok ? 0 : 1);
