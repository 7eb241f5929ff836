// `pnpm bench`: our host (built packages/*/dist), and the same host as `ack serve --workers 2`
// (`ack-w2`), beside the Node ceiling (node:http answering the same bytes from memory; `ceiling-h`
// also sending our host's headers), nginx (one worker), Express 5 + express.static, sirv and
// @fastify/static, all on loopback serving the same files. Load comes from wrk (one thread,
// 64 connections) pinned to CPU 1, the server under test to CPU 0. Every server is measured in
// turn within each round; the figures reported are medians over rounds, and each ratio is the
// median of the ratios taken within one round (the machine may be busy; a round's servers share
// its conditions). Prints a table and writes docs/benchmarks.md (see that page for the method).
//
//   BENCH_DURATION=3   seconds per measurement (quick: 1)
//   BENCH_ROUNDS=5     rounds (at least 3; more rounds of shorter runs ride out a busy moment better)
//   BENCH_ONLY=1k,304  only these cells
//   BENCH_NO_DOCS=1    do not rewrite docs/benchmarks.md
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from './lib/files.mjs';
import { nginxBinary, nginxVersion, startAckWorkers, startNginx, startNode } from './lib/servers.mjs';
import { wrk, wrkVersion, writeScripts } from './lib/wrk.mjs';
import { cpuSeconds, pinning } from './lib/cpu.mjs';
import { CELLS, PEERS } from './lib/cells.mjs';
import { fmt } from './lib/stats.mjs';
import { memoryRun, renderDoc, renderTable, summarize } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const work = path.join(here, '.work');
const DURATION = Number(process.env.BENCH_DURATION ?? 3);
const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 5));
const WARMUP = Math.min(2, DURATION);
const only = process.env.BENCH_ONLY?.split(',');

function get(url, headers) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        res.resume();
        res.once('end', () => resolve({ status: res.statusCode, headers: res.headers }));
      })
      .once('error', reject);
  });
}

async function measure(server, cell, scripts, files, warm) {
  const target = cell.path(server.name);
  const url = server.url + target;
  const headers = (await cell.headers?.(url)) ?? {};
  // One request first: the answer must be the expected one, or the figure means nothing.
  // (node:http, not fetch: fetch adds `Cache-Control: no-cache` to conditional requests, which some
  // peers take as a reason never to answer 304; wrk sends no such header.)
  const probe = await get(url, headers);
  const problems = probe.status === cell.status ? [] : [`answered ${probe.status}`];
  if (cell.id === 'screen' && !probe.headers['content-encoding']) problems.push('not compressed');
  const script = scripts[cell.script ?? 'plain'];
  const run = { url: cell.script ? server.url : url, seconds: DURATION, script, headers };
  if (warm) await wrk({ ...run, seconds: WARMUP });
  const cpuBefore = cpuSeconds(server.pid);
  const r = await wrk(run);
  const serverCpu = (cpuSeconds(server.pid) - cpuBefore) / DURATION;
  const expectedWrong = cell.status >= 400 ? r.requests : 0;
  if (r.wrongStatus !== expectedWrong) problems.push(`${r.wrongStatus} unexpected statuses`);
  if (r.errors) problems.push(`${r.errors} socket errors`);
  return { ...r, value: cell.throughput ? r.mbps : r.rps, serverCpu, problems };
}

/** Where `ack` and `ceiling-h` answer a path with different header names (undefined: the same). */
async function headerNamesDiffer(servers, target) {
  const names = async (name) => {
    const server = servers.find((s) => s.name === name);
    const { headers } = await get(server.url + target, {});
    return Object.keys(headers).sort().join(', ');
  };
  const [ack, ceiling] = [await names('ack'), await names('ceiling-h')];
  return ack === ceiling ? undefined : `ack: ${ack}; ceiling-h: ${ceiling}`;
}

async function main() {
  for (const dist of ['packages/host/dist/index.js', 'packages/wwwroot/dist/index.js', 'packages/cli/dist/bin.js']) {
    if (!fs.existsSync(path.join(repo, dist))) throw new Error(`${dist} is missing: run pnpm build (pnpm bench does)`);
  }
  const wrkVer = wrkVersion();
  if (!wrkVer) {
    console.error(
      'bench: wrk is not installed; install it (Debian/Ubuntu: sudo apt-get install wrk) and run pnpm bench again.',
    );
    process.exitCode = 1;
    return;
  }
  console.log('bench: preparing files…');
  const files = prepareFiles(work, repo);
  const scripts = writeScripts(path.join(work, 'lua'), { tree: files.tree, screen: files.screen });
  const servers = [];
  const notes = [];
  if (!pinning)
    notes.push('taskset is missing or the machine has one CPU: server and wrk are not pinned to separate CPUs.');
  let nginxVer = 'not installed';
  try {
    const arg = [files.layoutFile];
    servers.push(await startNode('ack', path.join(here, 'servers/ack.mjs'), arg, ['--expose-gc']));
    servers.push(await startAckWorkers('ack-w2', files.layoutFile, repo));
    servers.push(await startNode('ceiling', path.join(here, 'servers/ceiling.mjs'), arg));
    servers.push(await startNode('ceiling-h', path.join(here, 'servers/ceiling.mjs'), [...arg, '--edge-headers']));
    const differ = await headerNamesDiffer(servers, '/1k.txt');
    if (differ) notes.push(`ceiling-h does not send the same header names as ack (${differ}): its column is off.`);
    const bin = nginxBinary();
    if (bin) {
      nginxVer = nginxVersion(bin) ?? 'unknown';
      try {
        servers.push(await startNginx(bin, work, files));
      } catch (err) {
        notes.push(`nginx could not start (${err.message.split('\n')[0]}); its columns are empty.`);
      }
    } else notes.push('nginx is not installed (Debian: nginx-light); its columns are empty.');
    servers.push(await startNode('express', path.join(here, 'servers/express-static.mjs'), arg));
    servers.push(await startNode('sirv', path.join(here, 'servers/sirv.mjs'), arg));
    servers.push(await startNode('fastify', path.join(here, 'servers/fastify-static.mjs'), arg));
    for (const n of notes) console.log(`bench: ${n}`);
    const cells = CELLS.filter((c) => !only || only.includes(c.id));
    console.log(
      `bench: ${servers.map((s) => s.name).join(', ')}; ${cells.length} cells × ${ROUNDS} rounds × ${DURATION} s; ${wrkVer}, ${pinning ? 'server on CPU 0, wrk on CPU 1' : 'not pinned'}`,
    );

    // results[cell][server] = one measurement per round
    const results = Object.fromEntries(cells.map((c) => [c.id, Object.fromEntries(servers.map((s) => [s.name, []]))]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const cell of cells) {
        // Each round starts with another server, so none always runs first or last.
        const order = servers.map((_, i) => servers[(i + round) % servers.length]);
        for (const server of order) {
          const r = await measure(server, cell, scripts, files, round === 0);
          results[cell.id][server.name].push(r);
          const v = cell.throughput ? `${fmt(r.mbps, 1)} MB/s` : `${fmt(r.rps)} req/s`;
          console.log(
            `  round ${round + 1} ${cell.label.padEnd(24)} ${server.name.padEnd(8)} ${v.padStart(14)}  server CPU ${fmt(r.serverCpu * 100)}%, wrk CPU ${fmt(r.wrkCpu * 100)}%${r.problems.length ? `  ⚠ ${r.problems.join('; ')}` : ''}`,
          );
        }
      }
    }

    const ack = servers.find((s) => s.name === 'ack');
    console.log('bench: memory of our host across the 5,000-file tree…');
    const memory = await memoryRun(ack, scripts.tree, DURATION);
    console.log(`  RSS MiB after a full GC: ${memory.map((s) => s.gcRssMiB.toFixed(1)).join(' → ')}`);

    const rows = summarize(
      cells,
      results,
      servers.map((s) => s.name),
      PEERS,
    );
    const table = renderTable(
      rows,
      servers.map((s) => s.name),
    );
    console.log('\n' + table + '\n');
    if (!process.env.BENCH_NO_DOCS) {
      const doc = renderDoc({ table, rows, memory, notes, nginxVer, wrkVer, duration: DURATION, rounds: ROUNDS, repo });
      fs.writeFileSync(path.join(repo, 'docs/benchmarks.md'), doc);
      console.log('bench: wrote docs/benchmarks.md');
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err.stack ?? err}`);
  process.exitCode = 1;
});
