// The static-file suite of `pnpm bench` (bench/run.mjs): our host (built packages/*/dist), and the same host as `ack serve --workers 2`
// (`ack-w2`), beside the Node ceiling (node:http answering the same bytes from memory; `ceiling-h`
// also sending our host's headers), nginx (one worker), Express 5 + express.static, sirv and
// @fastify/static, all on loopback serving the same files. Load comes from wrk (one thread,
// 64 connections) pinned to CPU 1, the server under test to CPU 0. Within each round our host is
// measured right beside each peer in turn (three times beside the ceiling); each ratio is the
// median over rounds of the ratios within those pairs, since the machine drifts between runs far
// apart. Prints a table and writes docs/benchmarks.md (see that page for the method).
//
//   BENCH_DURATION=2   seconds per measurement (quick: 1)
//   BENCH_ROUNDS=5     rounds (at least 3; more rounds of shorter runs ride out a busy moment better)
//   BENCH_ONLY=1k,304  only these cells
//   BENCH_SERVERS=ack,ceiling  only these servers (ratios need their peers among them)
//   BENCH_NO_DOCS=1    do not rewrite docs/benchmarks.md
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from '../lib/files.mjs';
import { nginxBinary, nginxVersion, startAckWorkers, startNginx, startNode } from '../lib/servers.mjs';
import { wrk, wrkVersion, writeScripts } from '../lib/wrk.mjs';
import { cpuSeconds, pinning } from '../lib/cpu.mjs';
import { CELLS, PEERS } from '../lib/cells.mjs';
import { fmt } from '../lib/stats.mjs';
import { memoryRun, renderDoc, renderTable, summarize } from '../lib/report.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(here, '..');
const work = path.join(here, '.work');
const DURATION = Number(process.env.BENCH_DURATION ?? 2);
const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 5));
const WARMUP = Math.min(2, DURATION);
const onlyServers = process.env.BENCH_SERVERS?.split(',');
if (onlyServers && !onlyServers.includes('ack'))
  throw new Error('BENCH_SERVERS must name ack: every ratio is ack to a peer');

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

async function measure(server, others, cell, scripts, files, warm) {
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
  const othersBefore = others.map((s) => cpuSeconds(s.pid));
  const r = await wrk(run);
  const serverCpu = (cpuSeconds(server.pid) - cpuBefore) / DURATION;
  // CPU 0 is shared by every server: one still busy from its own run (a collection after the
  // load) would take from the one measured. Named when it took more than 5% of the CPU.
  others.forEach((s, i) => {
    const share = (cpuSeconds(s.pid) - othersBefore[i]) / DURATION;
    if (share > 0.05) problems.push(`${s.name} used ${fmt(share * 100)}% CPU meanwhile`);
  });
  const expectedWrong = cell.status >= 400 ? r.requests : 0;
  if (r.wrongStatus !== expectedWrong) problems.push(`${r.wrongStatus} unexpected statuses`);
  if (r.errors) problems.push(`${r.errors} socket errors`);
  return { ...r, value: cell.throughput ? r.mbps : r.rps, serverCpu, problems };
}

/**
 * Where `ack` and `ceiling-h` answer a path, and its 304, with different header names (undefined:
 * the same).
 */
async function headerNamesDiffer(servers, target) {
  const names = async (name, conditional) => {
    const server = servers.find((s) => s.name === name);
    const url = server.url + target;
    const { headers } = await get(url, conditional ? { 'If-None-Match': (await get(url, {})).headers.etag } : {});
    return Object.keys(headers).sort().join(', ');
  };
  for (const conditional of [false, true]) {
    const [ack, ceiling] = [await names('ack', conditional), await names('ceiling-h', conditional)];
    if (ack !== ceiling) return `${conditional ? '304: ' : ''}ack: ${ack}; ceiling-h: ${ceiling}`;
  }
  return undefined;
}

export const id = 'static';
export const cellIds = CELLS.map((c) => c.id);

/** The static-file suite over HTTP/1.1; `only` names the cells to run (undefined: all). */
export async function run(only) {
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
    const wanted = (name) => !onlyServers || onlyServers.includes(name);
    const node = async (name, script, args = arg, flags = []) => {
      if (wanted(name)) servers.push(await startNode(name, path.join(here, 'servers', script), args, flags));
    };
    await node('ack', 'ack.mjs', arg, ['--expose-gc']);
    if (wanted('ack-w2')) servers.push(await startAckWorkers('ack-w2', files.layoutFile, repo));
    await node('ceiling', 'ceiling.mjs');
    await node('ceiling-h', 'ceiling.mjs', [...arg, '--edge-headers']);
    if (wanted('ack') && wanted('ceiling-h')) {
      const differ = await headerNamesDiffer(servers, '/1k.txt');
      if (differ) notes.push(`ceiling-h does not send the same header names as ack (${differ}): its column is off.`);
    }
    const bin = nginxBinary();
    if (!wanted('nginx')) nginxVer = 'not measured';
    else if (bin) {
      nginxVer = nginxVersion(bin) ?? 'unknown';
      try {
        servers.push(await startNginx(bin, work, files));
      } catch (err) {
        notes.push(`nginx could not start (${err.message.split('\n')[0]}); its columns are empty.`);
      }
    } else notes.push('nginx is not installed (Debian: nginx-light); its columns are empty.');
    await node('express', 'express-static.mjs');
    await node('sirv', 'sirv.mjs');
    await node('fastify', 'fastify-static.mjs');
    for (const n of notes) console.log(`bench: ${n}`);
    const cells = CELLS.filter((c) => !only || only.includes(c.id));
    console.log(
      `bench: ${servers.map((s) => s.name).join(', ')}; ${cells.length} cells × ${ROUNDS} rounds × ${DURATION} s; ${wrkVer}, ${pinning ? 'server on CPU 0, wrk on CPU 1' : 'not pinned'}`,
    );

    // Paired: within a round, our host is measured right beside each peer in turn (ack then the
    // peer, or the peer then ack, alternating), and each ratio is taken between the two runs of a
    // pair, a few seconds apart. The machine's load drifts over seconds to minutes; a ratio between
    // runs far apart in time measures that drift as much as the servers. The ceiling, which the
    // goals are stated against, gets three pairs per round.
    // results[cell][server][round] = that server's runs; beside[cell][round][peer] = ack's runs beside them.
    const ackServer = servers.find((s) => s.name === 'ack');
    const peers = servers.filter((s) => s !== ackServer);
    const results = Object.fromEntries(cells.map((c) => [c.id, Object.fromEntries(servers.map((s) => [s.name, []]))]));
    const beside = Object.fromEntries(cells.map((c) => [c.id, []]));
    const warmed = new Set();
    const run = async (server, cell, round, peer) => {
      const key = `${server.name} ${cell.id}`;
      const r = await measure(
        server,
        servers.filter((s) => s !== server),
        cell,
        scripts,
        files,
        !warmed.has(key),
      );
      warmed.add(key);
      const v = cell.throughput ? `${fmt(r.mbps, 1)} MB/s` : `${fmt(r.rps)} req/s`;
      const name = peer ? `ack (beside ${peer.name})` : server.name;
      console.log(
        `  round ${round + 1} ${cell.label.padEnd(24)} ${name.padEnd(20)} ${v.padStart(14)}  server CPU ${fmt(r.serverCpu * 100)}%, wrk CPU ${fmt(r.wrkCpu * 100)}%${r.problems.length ? `  ⚠ ${r.problems.join('; ')}` : ''}`,
      );
      return r;
    };
    const CEILING_PAIRS = 3;
    const schedule = peers.flatMap((p) => Array(p.name === 'ceiling' ? CEILING_PAIRS : 1).fill(p));
    for (let round = 0; round < ROUNDS; round++) {
      for (const cell of cells) {
        const pairs = {};
        const runs = {};
        // Each round starts with another peer, so none always runs first or last.
        for (let i = 0; i < schedule.length; i++) {
          const peer = schedule[(i + round) % schedule.length];
          const ackFirst = (i + round) % 2 === 0;
          let ours;
          if (ackFirst) ours = await run(ackServer, cell, round, peer);
          const theirs = await run(peer, cell, round);
          if (!ackFirst) ours = await run(ackServer, cell, round, peer);
          (pairs[peer.name] ??= []).push(ours);
          (runs[peer.name] ??= []).push(theirs);
        }
        beside[cell.id].push(pairs);
        for (const [name, list] of Object.entries(runs)) results[cell.id][name].push(list);
        results[cell.id].ack.push(Object.values(pairs).flat());
      }
    }

    // The memory run and docs/benchmarks.md need the whole run, every server.
    const whole = !onlyServers && !only;
    const ack = servers.find((s) => s.name === 'ack');
    let memory = [];
    if (whole) {
      console.log('bench: memory of our host across the 5,000-file tree…');
      memory = await memoryRun(ack, scripts.tree, DURATION);
      console.log(`  RSS MiB after a full GC: ${memory.map((s) => s.gcRssMiB.toFixed(1)).join(' → ')}`);
    }

    const rows = summarize(
      cells,
      results,
      beside,
      servers.map((s) => s.name),
      PEERS,
    );
    const table = renderTable(
      rows,
      servers.map((s) => s.name),
    );
    console.log('\n' + table + '\n');
    if (whole && !process.env.BENCH_NO_DOCS) {
      const doc = renderDoc({ table, rows, memory, notes, nginxVer, wrkVer, duration: DURATION, rounds: ROUNDS, repo });
      fs.writeFileSync(path.join(repo, 'docs/benchmarks.md'), doc);
      console.log('bench: wrote docs/benchmarks.md');
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
