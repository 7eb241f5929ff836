// HTTPS with HTTP/1.1: our host's `Kestrel:Endpoints` HTTPS listener beside a bare Node HTTPS server
// (the static suite's Node ceiling on `node:https`) and nginx (`ssl`, one worker), all with one
// certificate on CPU 0; wrk over TLS (one thread, 64 keep-alive connections) on CPU 1. The goal:
// our host at least 0.85x of bare Node HTTPS.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from '../lib/files.mjs';
import { nginxBinary, startNode } from '../lib/servers.mjs';
import { benchCertificate, tlsAppDir } from '../lib/tls.mjs';
import { startNginxTls } from '../lib/tls-servers.mjs';
import { CONNECTIONS, wrk, wrkVersion, writeScripts } from '../lib/wrk.mjs';
import { cpuSeconds, pinning } from '../lib/cpu.mjs';
import { paired, pairedTable } from '../lib/paired.mjs';
import { docFile, writeSuiteSection } from '../lib/doc-sections.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(here, '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 1);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const GOAL = 0.85;

export const id = 'https';
const CELLS = [
  { id: 'https-1k', label: '1 KiB file', path: '/1k.txt', status: 200 },
  { id: 'https-304', label: '304 (If-None-Match)', path: '/1k.txt', status: 304, conditional: true },
  { id: 'https-shared', label: 'shared file', path: '/shared/theme.css', status: 200 },
];
export const cellIds = CELLS.map((c) => c.id);

async function get(url, headers = {}) {
  const https = await import('node:https');
  return new Promise((resolve, reject) => {
    https
      .get(url, { headers, agent: false, rejectUnauthorized: false }, (res) => {
        res.resume();
        res.once('end', () => resolve({ status: res.statusCode, etag: res.headers.etag }));
      })
      .once('error', reject);
  });
}

function measurer(scripts) {
  return async (server, cell, warm) => {
    const url = server.url + cell.path;
    const headers = cell.conditional ? { 'If-None-Match': (await get(url)).etag } : {};
    const first = await get(url, headers);
    const problems = first.status === cell.status ? [] : [`answered ${first.status}`];
    const run = { url, seconds: DURATION, script: scripts.plain, headers };
    if (warm) await wrk({ ...run, seconds: Math.min(1, DURATION) });
    const before = cpuSeconds(server.pid);
    const r = await wrk(run);
    const spent = cpuSeconds(server.pid) - before;
    const serverCpu = spent / DURATION;
    if (r.wrongStatus) problems.push(`${r.wrongStatus} unexpected statuses`);
    if (r.errors) problems.push(`${r.errors} socket errors`);
    return { value: r.rps, loadCpu: r.wrkCpu, serverCpu, cpuPerRequest: spent / r.requests, problems };
  };
}

export async function run(only) {
  const version = wrkVersion();
  if (!version) throw new Error('wrk is not installed');
  const work = path.join(here, '.work');
  const files = prepareFiles(work, repo);
  const cert = benchCertificate(work);
  const scripts = writeScripts(path.join(work, 'lua'), {});
  const servers = [];
  const notes = [];
  try {
    // HTTP/1.1 only on this listener, as the peers: wrk offers no ALPN, so it would get HTTP/1.1
    // anyway; the setting keeps our host from paying for an HTTP/2-capable server it cannot use.
    const ack = await startNode('ack', path.join(here, 'servers/ack.mjs'), [
      files.layoutFile,
      tlsAppDir(files, cert, 'Http1'),
    ]);
    servers.push(ack);
    const tls = ack.info.endpoints.find((e) => e.url.startsWith('https:'));
    const ackTls = { ...ack, url: tls.url.replace(/\/$/, '') };
    const peers = [
      await startNode('node-https', path.join(here, 'servers/ceiling.mjs'), [
        files.layoutFile,
        '--edge-headers',
        '--tls',
        cert.cert,
        cert.key,
      ]),
    ];
    const bin = nginxBinary();
    if (bin) peers.push(await startNginxTls(bin, work, files, cert));
    else notes.push('nginx is not installed: no nginx column.');
    servers.push(...peers);
    const cells = CELLS.filter((c) => !only || only.includes(c.id));
    console.log(
      `bench https: ${[ackTls, ...peers].map((s) => s.name).join(', ')}; ${cells.length} cells × ${ROUNDS} rounds × ${DURATION} s; ${version}, ${pinning ? 'server on CPU 0, wrk on CPU 1' : 'not pinned'}`,
    );
    const rows = await paired({ ack: ackTls, peers, cells, rounds: ROUNDS, measure: measurer(scripts) });
    const goal = (row) => `≥ ${GOAL}x node-https: ${row.ratios['node-https'] >= GOAL ? 'met' : '**not met**'}`;
    const table = pairedTable(rows, ['ack', ...peers.map((p) => p.name)], {
      loadName: 'wrk',
      goal,
      cpuPeers: ['node-https'],
    });
    console.log(`\n${table}\n`);
    if (!only && !process.env.BENCH_NO_DOCS) {
      writeSuiteSection(docFile(repo), id, section({ table, notes, version }));
      console.log('bench https: wrote its section of docs/benchmarks.md');
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

function section({ table, notes, version }) {
  return `## HTTPS with HTTP/1.1

Generated by \`BENCH_ONLY=https pnpm bench\` (\`bench/suites/https.mjs\`) on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, Node ${process.version}, ${version}; ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${DURATION} s per measurement.

- **Servers**, all on CPU 0 with the same self-signed ECDSA P-256 certificate: our host on a
  \`Kestrel:Endpoints\` HTTPS listener with \`Protocols: Http1\` and the static suite's settings;
  **node-https**, the static suite's ceiling-h on \`node:https\` (the same bytes from memory, with
  the headers our host sends): bare Node HTTPS; nginx, one worker, \`listen ... ssl\`.
- **Load**: wrk over TLS, one thread, ${CONNECTIONS} keep-alive connections (the handshakes happen once,
  at the start: the cells measure TLS record work, not handshakes), pinned to CPU 1.
- **Pairs** as in the other suites; **goal**: our host ≥ ${GOAL}x of bare Node HTTPS.
- **CPU per request** as in the HTTP/2 suite: each server's CPU time over the requests it answered;
  "ack/node-https by CPU per request" is node-https's over ours within each pair. Where "wrk CPU" is
  95% or more, wrk set the pace and this figure decides the goal; below, the req/s ratio does.

${table}
${notes.map((n) => `\nNote: ${n}`).join('')}`;
}
