// HTTP/2 over TLS: our host's `Kestrel:Endpoints` HTTPS listener beside nginx (`http2`, one worker),
// a bare Node `http2` server on the stream API and one on the compatibility API, and Caddy
// (`file_server`), all on CPU 0 with one certificate. Load: h2load, one thread, 16 connections of
// 16 streams, pinned to CPU 1 (its CPU share is shown, to see it was not the bottleneck).
import http2 from 'node:http2';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from '../lib/files.mjs';
import { nginxBinary, startNode } from '../lib/servers.mjs';
import { benchCertificate, tlsAppDir } from '../lib/tls.mjs';
import { caddyVersion, startCaddy, startNginxTls } from '../lib/tls-servers.mjs';
import { H2_CONNECTIONS, H2_STREAMS, h2load, h2loadVersion } from '../lib/h2load.mjs';
import { cpuSeconds, pinning } from '../lib/cpu.mjs';
import { paired, pairedTable } from '../lib/paired.mjs';
import { docFile, writeSuiteSection } from '../lib/doc-sections.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(here, '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 1);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const exact = '/Mixed/CaseFile.txt';

export const id = 'h2';
const CELLS = [
  { id: 'h2-1k', label: '1 KiB file', path: () => '/1k.txt', status: 200 },
  { id: 'h2-304', label: '304 (If-None-Match)', path: () => '/1k.txt', status: 304, conditional: true },
  { id: 'h2-shared', label: 'shared file', path: () => '/shared/theme.css', status: 200 },
  // Peers have no case-insensitive lookup: they are asked for the exact name.
  {
    id: 'h2-ci',
    label: 'case-insensitive hit',
    path: (s) => (s === 'ack' ? '/mIXED/casefile.TXT' : exact),
    status: 200,
  },
  { id: 'h2-miss', label: 'miss (404)', path: () => '/no-such-file.txt', status: 404 },
  {
    id: 'h2-4m',
    label: '4 MiB file (MB/s)',
    path: () => '/4m.bin',
    status: 200,
    throughput: true,
    unit: 'MB/s',
    decimals: 1,
  },
];
export const cellIds = CELLS.map((c) => c.id);

/** One HTTP/2 request: its status and ETag (the certificate is the bench's own). */
function probe(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const session = http2.connect(u.origin, { rejectUnauthorized: false });
    session.once('error', reject);
    const req = session.request({ ':path': u.pathname, ...headers });
    req.once('response', (h) => {
      req.resume();
      req.once('end', () => {
        session.close();
        resolve({ status: h[':status'], etag: h.etag });
      });
    });
    req.once('error', reject);
    req.end();
  });
}

// Requests per second of the last run, per server and cell: the next run's count is sized from it.
const rates = new Map();

async function measure(server, cell, warm) {
  const url = server.url + cell.path(server.name);
  const headers = cell.conditional ? { 'if-none-match': (await probe(url)).etag } : {};
  const first = await probe(url, headers);
  const problems = first.status === cell.status ? [] : [`answered ${first.status}`];
  const key = `${server.name} ${cell.id}`;
  let r;
  let before;
  try {
    if (warm || !rates.has(key)) {
      const w = await h2load({ url, requests: cell.throughput ? 64 : 4096, headers });
      rates.set(key, w.rps);
    }
    // About DURATION seconds of requests, at least a few rounds of every stream.
    const requests = Math.max(H2_CONNECTIONS * H2_STREAMS * 4, Math.round(rates.get(key) * DURATION));
    before = cpuSeconds(server.pid);
    r = await h2load({ url, requests, headers });
    rates.set(key, r.rps);
  } catch (err) {
    // A run that cannot finish is a finding about that server, not the end of the suite.
    return { value: NaN, loadCpu: NaN, serverCpu: NaN, problems: [...problems, err.message] };
  }
  const spent = cpuSeconds(server.pid) - before;
  const serverCpu = spent / r.seconds;
  const klass = `${String(cell.status)[0]}xx`;
  const wrong = Object.values(r.status).reduce((a, b) => a + b, 0) - r.status[klass];
  if (wrong) problems.push(`${wrong} answers not ${klass}`);
  // h2load counts every 4xx as failed: a miss's 404s are the expected answer.
  const failed = r.failed - (cell.status >= 400 ? r.status['4xx'] : 0);
  if (failed) problems.push(`${failed} failed requests`);
  return {
    value: cell.throughput ? r.mbps : r.rps,
    loadCpu: r.loadCpu,
    serverCpu,
    cpuPerRequest: r.done > 0 ? spent / r.done : NaN,
    problems,
  };
}

export async function run(only) {
  const version = h2loadVersion();
  if (!version) throw new Error('h2load is not installed (Debian: nghttp2-client)');
  const work = path.join(here, '.work');
  const files = prepareFiles(work, repo);
  const cert = benchCertificate(work);
  const servers = [];
  const notes = [];
  try {
    const ack = await startNode('ack', path.join(here, 'servers/ack.mjs'), [files.layoutFile, tlsAppDir(files, cert)]);
    servers.push(ack);
    const tls = ack.info.endpoints.find((e) => e.url.startsWith('https:'));
    const ackTls = { ...ack, url: tls.url.replace(/\/$/, '') };
    const peers = [];
    const bin = nginxBinary();
    if (bin) peers.push(await startNginxTls(bin, work, files, cert));
    else notes.push('nginx is not installed: no nginx column.');
    for (const api of ['stream', 'compat'])
      peers.push(
        await startNode(`node-${api}`, path.join(here, 'servers/h2-node.mjs'), [
          files.layoutFile,
          cert.cert,
          cert.key,
          api,
        ]),
      );
    const caddy = caddyVersion();
    if (caddy) peers.push(await startCaddy(work, files, cert));
    else notes.push('caddy is not installed: no caddy column.');
    servers.push(...peers);
    const cells = CELLS.filter((c) => !only || only.includes(c.id));
    console.log(
      `bench h2: ${[ackTls, ...peers].map((s) => s.name).join(', ')}; ${cells.length} cells × ${ROUNDS} rounds × ${DURATION} s; ${version}, ${pinning ? 'server on CPU 0, h2load on CPU 1' : 'not pinned'}`,
    );
    const rows = await paired({ ack: ackTls, peers, cells, rounds: ROUNDS, measure });
    const names = ['ack', ...peers.map((p) => p.name)];
    const table = pairedTable(rows, names, { loadName: 'h2load', cpuPeers: ['node-stream'] });
    console.log(`\n${table}\n`);
    if (!only && !process.env.BENCH_NO_DOCS) {
      writeSuiteSection(docFile(repo), id, section({ table, notes, version, caddy }));
      console.log('bench h2: wrote its section of docs/benchmarks.md');
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

function section({ table, notes, version, caddy }) {
  return `## HTTP/2 over TLS

Generated by \`BENCH_ONLY=h2 pnpm bench\` (\`bench/suites/h2.mjs\`) on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, Node ${process.version}, ${version}, Caddy ${caddy ?? 'not installed'}; ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${DURATION} s per measurement.

- **Servers**, all on CPU 0 with the same self-signed ECDSA P-256 certificate: our host on a
  \`Kestrel:Endpoints\` HTTPS listener (\`Http1AndHttp2\`, HTTP/2 chosen by ALPN) with the static
  suite's settings; nginx, one worker, \`listen ... ssl http2\`; **node-stream**, a bare
  \`node:http2\` secure server on the stream API (\`stream.respond\` + \`stream.end\` from memory,
  with ETag and 304); **node-compat**, the same on the compatibility API (\`res.writeHead\` +
  \`res.end\`); Caddy \`file_server\` (HTTP/2 by default, \`GOMAXPROCS=1\`).
- **Load**: h2load, one thread, ${H2_CONNECTIONS} connections × ${H2_STREAMS} concurrent streams
  (\`-c ${H2_CONNECTIONS} -m ${H2_STREAMS}\`), pinned to CPU 1, for a count of requests sized to last
  about ${DURATION} s at the rate of that server's previous run (h2load's duration mode now and then
  waits for ever at its end on a Node server). "h2load CPU" is its CPU time over the run as a share
  of one core: below 100% means it was not the bottleneck.
- **CPU per request**: each server's CPU time (user + system, read from /proc before and
  after the run) over the requests it answered; "ack/node-stream by CPU per request" is node-stream's
  figure over ours within each pair (median over rounds; above 1, our host spends less per request).
  **Which figure decides**: where "h2load CPU" is 95% or more, h2load set the pace (it decodes every
  response head, so a server sending more headers is slowed there too) and the req/s ratio measures
  the load generator as much as the servers; the goal (≥ 0.8x node-stream) is then read on the CPU
  per request. Where h2load stays below 95%, the req/s ratio decides.
- **Pairs**: within each round our host is measured right beside each peer in turn; each
  \`ack/peer\` ratio is the median over rounds of the ratio within the pair. One request first
  checks the status; h2load's status counts check every answer.
- The case-insensitive hit asks our host for \`/mIXED/casefile.TXT\`, the peers for the exact name.
  Requests per second (MB/s for the 4 MiB file), medians over all runs:

${table}
${notes.map((n) => `\nNote: ${n}`).join('')}`;
}
