// Turns the measurements into medians and ratios, the table, and docs/benchmarks.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { wrk } from './wrk.mjs';
import { fmt, median } from './stats.mjs';
import { suiteSections } from './doc-sections.mjs';

/**
 * Per cell: each server's median over all its runs, and each ratio to a peer as the median over
 * rounds of that round's pair ratios (our host's run beside the peer's run; the median when a
 * round has several pairs with that peer). `spread` is the lowest and highest pair ratio to the
 * ceiling, to show how much the machine moved.
 */
export function summarize(cells, results, beside, names, peers) {
  return cells.map((cell) => {
    const r = results[cell.id];
    const pairs = beside[cell.id];
    const pairRatios = (peer, i) => pairs[i][peer].map((ours, k) => ours.value / r[peer][i][k].value);
    const ratioTo = (peer) => (r[peer]?.length ? median(pairs.map((_, i) => median(pairRatios(peer, i)))) : NaN);
    // The best peer of each round (by its median), and our host's runs beside it.
    const peer = median(
      pairs.map((_, i) => {
        const best = peers
          .filter((p) => r[p]?.length)
          .sort((a, b) => median(r[b][i].map((m) => m.value)) - median(r[a][i].map((m) => m.value)))[0];
        return best ? median(pairRatios(best, i)) : NaN;
      }),
    );
    const ceiling = ratioTo('ceiling');
    const all = r.ceiling?.length ? pairs.flatMap((_, i) => pairRatios('ceiling', i)) : [];
    const goals = [];
    if (cell.ceiling) goals.push([`≥ ${cell.ceiling}x ceiling`, ceiling >= cell.ceiling]);
    if (cell.peers) goals.push([`≥ ${cell.peers}x best peer`, peer >= cell.peers]);
    const runs = (n) => r[n].flat();
    return {
      cell,
      rounds: pairs.length,
      medians: Object.fromEntries(names.map((n) => [n, median(runs(n).map((m) => m.value))])),
      ratios: {
        ceiling,
        ceilingH: ratioTo('ceiling-h'),
        nginx: ratioTo('nginx'),
        peer,
        workers: r['ack-w2']?.length ? 1 / ratioTo('ack-w2') : NaN,
      },
      spread: all.length ? [Math.min(...all), Math.max(...all)] : undefined,
      goals,
      wrkCpu: Math.max(...names.flatMap((n) => runs(n).map((m) => m.wrkCpu)).filter(Number.isFinite)),
      ackCpu: median(runs('ack').map((m) => m.serverCpu)),
      problems: [...new Set(names.flatMap((n) => runs(n).flatMap((m) => m.problems.map((p) => `${n}: ${p}`))))],
    };
  });
}

export function renderTable(rows, names) {
  const head = [
    'cell',
    ...names,
    'ack/ceiling (pair range)',
    'ack/ceiling-h',
    'ack/nginx',
    'ack/best peer',
    'ack-w2/ack',
    'goals',
    'wrk CPU (max)',
    'ack CPU',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const unit = row.cell.throughput ? 1 : 0;
    lines.push(
      `| ${[
        row.cell.label,
        ...names.map((n) => fmt(row.medians[n], unit)),
        `${fmt(row.ratios.ceiling, 2)}x${row.spread ? ` (${fmt(row.spread[0], 2)}–${fmt(row.spread[1], 2)})` : ''}`,
        `${fmt(row.ratios.ceilingH, 2)}x`,
        `${fmt(row.ratios.nginx, 2)}x`,
        `${fmt(row.ratios.peer, 2)}x`,
        `${fmt(row.ratios.workers, 2)}x`,
        row.goals.map(([g, ok]) => `${g}: ${ok ? 'met' : '**not met**'}`).join('; ') || '',
        `${fmt(row.wrkCpu * 100)}%`,
        `${fmt(row.ackCpu * 100)}%`,
      ].join(' | ')} |${row.problems.length ? ` ⚠ ${row.problems.join('; ')}` : ''}`,
    );
  }
  return lines.join('\n');
}

/** RSS of our host after a full GC, sampled after each of a few runs across the 5,000-file tree. */
export async function memoryRun(server, script, seconds, samples = 5) {
  const memoryOf = () =>
    new Promise((resolve) => {
      server.child.once('message', ({ after }) =>
        resolve({ gcRssMiB: after.rss / 2 ** 20, heapMiB: after.heapUsed / 2 ** 20 }),
      );
      server.child.send('memory');
    });
  const out = [await memoryOf()];
  for (let i = 0; i < samples; i++) {
    await wrk({ url: server.url, seconds, script });
    out.push(await memoryOf());
  }
  return out;
}

const WIRE_START = '<!-- wire-bytes:start -->';
const WIRE_END = '<!-- wire-bytes:end -->';

/** The bytes-on-the-wire section, kept from the current page (bench/wire-bytes.mjs writes it). */
export function wireSection(docFile) {
  try {
    const text = fs.readFileSync(docFile, 'utf8');
    const a = text.indexOf(WIRE_START);
    const b = text.indexOf(WIRE_END);
    if (a !== -1 && b > a) return text.slice(a, b + WIRE_END.length);
  } catch {
    // No page yet.
  }
  return `${WIRE_START}\nRun \`pnpm bench:wire\` to fill this section.\n${WIRE_END}`;
}

export function replaceWireSection(docFile, section) {
  const text = fs.readFileSync(docFile, 'utf8');
  const a = text.indexOf(WIRE_START);
  const b = text.indexOf(WIRE_END);
  const block = `${WIRE_START}\n${section}\n${WIRE_END}`;
  fs.writeFileSync(
    docFile,
    a !== -1 && b > a ? text.slice(0, a) + block + text.slice(b + WIRE_END.length) : `${text}\n${block}\n`,
  );
}

export function renderDoc({ table, memory, notes, nginxVer, wrkVer, duration, rounds, repo }) {
  const cpus = os.cpus();
  const version = (pkg) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(repo, 'node_modules', pkg, 'package.json'), 'utf8')).version;
    } catch {
      try {
        return JSON.parse(fs.readFileSync(path.join(repo, 'packages/host/node_modules', pkg, 'package.json'), 'utf8'))
          .version;
      } catch {
        return 'unknown';
      }
    }
  };
  const warm = memory.slice(1).map((s) => s.gcRssMiB);
  return `# Benchmarks

Generated by \`pnpm bench\` (\`bench/run.mjs\`); rerun it to refresh this page.

## Method

- **Servers**, all on loopback, serving the same files: our host (the built \`createHost\` +
  \`wwwroot\` module with the example's settings: security headers, CORS, sessions on); **the Node
  ceiling** (\`bench/servers/ceiling.mjs\`: plain \`node:http\` answering the same bytes from memory
  with the same validators, ETag/Last-Modified and 304, and a precompressed sidecar when accepted:
  no static server written for Node can be faster); **ceiling-h**, the same server sending also
  the headers our host adds to every answer with these settings (security headers, CORS's
  \`Vary: Origin\`, \`Accept-Ranges\`), in one flat list: what those headers cost Node itself
  (the run checks first that ceiling-h and our host send the same header names); nginx with one worker (generated config, not a
  daemon, \`sendfile on\`, \`gzip_static on\` for the screen); Express 5 + \`express.static\` (with
  the \`compression\` middleware on the screen's folder); sirv (\`brotli\`/\`gzip\` sidecars on);
  fastify + \`@fastify/static\` (\`preCompressed: true\`). \`ack-w2\` is our host as \`ack serve
  --workers 2\` (scale-out.md), pinned to CPU 0 like every server: the primary and both workers
  share that one CPU, so its column shows what the worker set-up costs, not what more cores buy
  (on a machine with cores to spare, run the workers unpinned to see that); the \`ack-w2/ack\` column
  is that cost as a ratio (taken within pairs, like every ratio below).
- **Load**: ${wrkVer}, one thread, 64 connections, keep-alive. The server under test runs on CPU 0
  and wrk on CPU 1 (\`taskset\`), so the load generator does not compete with the server; the "wrk
  CPU" column is wrk's own CPU time (from the shell's \`times\`) over the run, as a share of one
  core: below 100% means wrk was not the bottleneck. "ack CPU" is our host's share of CPU 0.
- **Rounds and pairs**: ${rounds} rounds of ${duration} s per measurement (a warm-up run before a
  server's first measurement of each cell). Within a round, for each cell, our host is measured
  **right beside each peer in turn** (ours then the peer's, or the other way round, alternating),
  three times beside the ceiling; each round starts with another peer. A ratio is taken within a
  pair, two runs a few seconds apart, because this machine's speed drifts over seconds to minutes
  (a server measured twenty seconds later can be 30% slower or faster with nothing changed); a
  ratio between runs far apart would measure that drift. **Each ratio is the median over rounds**
  of the round's pair ratio (the median of the three for the ceiling); the range beside
  \`ack/ceiling\` is the lowest and highest of its ${rounds * 3} pair ratios, the machine's noise in plain
  sight. Figures per server are medians over all its runs.
- **Other servers stay quiet**: every server shares CPU 0; a server that used more than 5% of it
  while another was measured (a collection after its own run) is named beside the row.
- **Checks**: before each measurement one request checks the status (and, for the screen, that
  the answer is compressed); wrk counts any other status; problems are shown beside the row.
- The case-insensitive hit asks our host for \`/mIXED/casefile.TXT\` (the file is
  \`Mixed/CaseFile.txt\`); the peers have no case-insensitive lookup and are asked for the exact name.
  The tree cell cycles through 5,000 files in 50 folders; the screen cell cycles through a page's
  five assets (HTML, two scripts, a stylesheet, an SVG; 250 KiB in all) with
  \`Accept-Encoding: br, gzip\` (nginx-light has no brotli: it answers gzip).
- **Goals** (our host): hit, 304 and shared file ≥ 0.8x the ceiling, case-insensitive hit and miss
  ≥ 0.7x; ≥ 3x the best of express.static, sirv and @fastify/static on the small-file cells, and at
  least equal to the best of them on the 4 MiB file.

## Latest run

- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
- Machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}
- Node ${process.version}; ${nginxVer.startsWith('nginx/') ? nginxVer : `nginx ${nginxVer}`}; Express ${version('express')}; sirv ${version('sirv')}; fastify ${version('fastify')}; @fastify/static ${version('@fastify/static')}
${notes.map((n) => `- Note: ${n}\n`).join('')}
Requests per second (MB/s for the 4 MiB file), medians over all runs; ratios as in "Rounds and pairs":

${table}

Reading the figures:

- Where wrk's CPU nears 100% (nginx and the ceiling on the larger cells), the load generator, not
  the server, set the pace: those peers' figures are lower bounds, and ratios to them flatter us.
- The Node ceiling and our host do the same work per byte; the gap between them is the headers
  our host sends (about 200 bytes and seven header lines more per answer than the ceiling) and
  what it does per request: the edge (client address, the path decoded once, the Host and body-size
  checks), the route-prefix check and the static lookup (a \`Map\` hit and a comparison of
  folder-watch counters; no system call). \`ack/ceiling-h\` separates the two: near 1x means the
  host's own work costs little beside what Node charges for the headers themselves
  (docs/pipeline.md, "Response heads").
- "best peer" is the best of express.static, sirv and @fastify/static in the same round. For the
  304, the manifest and the miss, sirv's answer is as cheap as Node allows (a 304 or a \`res.end\`
  from a plain \`node:http\` handler the benchmark writes for it), so on those cells the best peer
  *is* the ceiling and "3x the best peer" cannot be reached by any server written for Node.
- On a shared machine a single run can move by 2x; the medians of pair ratios are the
  figures to read; more rounds (\`BENCH_ROUNDS\`) narrow them more than longer ones.

Memory of our host: RSS after a full GC, before and after each of ${memory.length - 1} runs across the
5,000-file tree: ${memory.map((s) => s.gcRssMiB.toFixed(1)).join(' → ')} MiB (after warm-up it moves within
${(Math.max(...warm.slice(1)) - Math.min(...warm.slice(1))).toFixed(1)} MiB). Memory is bounded by design: at most 20,000 remembered URLs,
20,000 file facts, 5,000 folder listings and 32 MiB of small files' bytes (see docs/static-files.md).

## Bytes on the wire

${wireSection(path.join(repo, 'docs/benchmarks.md'))}

${suiteSections(path.join(repo, 'docs/benchmarks.md'))}

## How to rerun

\`pnpm bench\` builds the packages, then runs \`node bench/run.mjs\` (needs \`wrk\`; Debian/Ubuntu:
\`apt-get install wrk\`; nginx-light for the nginx column). A full run (5 rounds of 2 s per measurement) takes about 30 minutes.
Quick mode for iterating: \`BENCH_DURATION=1 BENCH_ROUNDS=3 node bench/run.mjs\` (about 10 minutes);
\`BENCH_ONLY=1k,304\` limits the cells and \`BENCH_SERVERS=ack,ceiling,ceiling-h\` the servers (our
host must be among them); either leaves this page alone, as does \`BENCH_NO_DOCS=1\`. \`pnpm bench:wire\` refreshes the
bytes-on-the-wire section (a few seconds). Figures move with
whatever else runs on the machine; compare ratios from one run, not absolute numbers across runs.
`;
}
