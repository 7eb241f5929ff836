// `pnpm bench:metrics-cost`: what metrics cost per request, measured so that other work on the
// machine moves the figure as little as possible (docs/benchmarks.md "Metrics: cost per request").
// Host and client run in one process (bench/servers/ack-loop.mjs), one keep-alive connection, one
// request at a time; metrics on beside metrics off (`AppSettings:UseMetrics` false), on the 1 KiB
// static hit and its 304. Two methods:
//
//   cpu (default)  the process's CPU time (process.cpuUsage) over COUNT requests after WARM, pinned
//                  to CPU 0 with taskset; ROUNDS rounds alternating which goes first, medians.
//   callgrind      instructions under `valgrind --tool=callgrind`: one run with SHORT requests and
//                  one with LONG after the same warm-up; the difference over LONG − SHORT is one
//                  request (start-up and warm-up cancel out). Slow (minutes per run), but the
//                  count does not move with what else the machine runs.
//
//   BENCH_METHOD=cpu|callgrind, BENCH_ROUNDS (5), BENCH_WARM (cpu 5000, callgrind 300),
//   BENCH_COUNT (20000), BENCH_SHORT (200), BENCH_LONG (1200), BENCH_NO_DOCS=1 (only print)
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from './lib/files.mjs';
import { docFile, writeSuiteSection } from './lib/doc-sections.mjs';
import { pinned } from './lib/cpu.mjs';
import { median } from './lib/stats.mjs';
import { metricsOffAppDir } from './suites/metrics.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const METHOD = process.env.BENCH_METHOD ?? 'cpu';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM = Number(process.env.BENCH_WARM ?? (METHOD === 'cpu' ? 5000 : 300));
const COUNT = Number(process.env.BENCH_COUNT ?? 20000);
const SHORT = Number(process.env.BENCH_SHORT ?? 200);
const LONG = Number(process.env.BENCH_LONG ?? 1200);
const GOAL = 1.03;
const CELLS = [
  { label: '1 KiB file', path: '/1k.txt', kind: 'plain' },
  { label: '304 (If-None-Match)', path: '/1k.txt', kind: 'conditional' },
];
if (!['cpu', 'callgrind'].includes(METHOD)) {
  console.error(`bench: BENCH_METHOD is cpu or callgrind, not ${METHOD}`);
  process.exit(2);
}
if (METHOD === 'callgrind' && spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('bench: valgrind is not installed');
  process.exit(2);
}

const files = prepareFiles(path.join(here, '.work'), repo);
const apps = { on: '-', off: metricsOffAppDir(files) };
const loop = (app, cell, warm, count) => [
  process.execPath,
  path.join(here, 'servers/ack-loop.mjs'),
  files.layoutFile,
  app,
  cell.path,
  cell.kind,
  String(warm),
  String(count),
];

/** CPU microseconds per request, one run. */
function cpuPerRequest(app, cell) {
  const [cmd, ...args] = pinned(0, loop(app, cell, WARM, COUNT));
  const run = spawnSync(cmd, args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`run failed:\n${run.stderr.slice(-2000)}`);
  const r = JSON.parse(run.stdout.trim().split('\n').pop());
  return r.cpuMicros / r.requests;
}

/** Instructions of one callgrind run. */
function instructions(app, cell, count) {
  const run = spawnSync(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', ...loop(app, cell, WARM, count)],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const m = /Collected : (\d+)/.exec(run.stderr);
  if (run.status !== 0 || !m) throw new Error(`callgrind run failed:\n${run.stderr.slice(-2000)}`);
  return Number(m[1]);
}

const rows = [];
for (const cell of CELLS) {
  const per = { on: [], off: [] };
  const ratios = [];
  for (let round = 0; round < (METHOD === 'cpu' ? ROUNDS : 1); round++) {
    const order = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    const got = {};
    for (const name of order) {
      got[name] =
        METHOD === 'cpu'
          ? cpuPerRequest(apps[name], cell)
          : (instructions(apps[name], cell, LONG) - instructions(apps[name], cell, SHORT)) / (LONG - SHORT);
      per[name].push(got[name]);
    }
    ratios.push(got.on / got.off);
    console.log(
      `  ${cell.label.padEnd(22)} round ${round + 1}: on ${got.on.toFixed(METHOD === 'cpu' ? 2 : 0)}, off ${got.off.toFixed(METHOD === 'cpu' ? 2 : 0)} ${METHOD === 'cpu' ? 'µs' : 'instructions'}/request`,
    );
  }
  rows.push({ cell, on: median(per.on), off: median(per.off), ratio: median(ratios) });
}

const unit = METHOD === 'cpu' ? 'CPU µs per request' : 'instructions per request';
const fmt = (n) => (METHOD === 'cpu' ? n.toFixed(2) : Math.round(n).toLocaleString('en'));
const table = [
  `| cell | metrics on (${unit}) | metrics off | on / off | goal ≤ ${GOAL}x |`,
  '|---|---:|---:|---:|---|',
  ...rows.map(
    (r) =>
      `| ${r.cell.label} | ${fmt(r.on)} | ${fmt(r.off)} | ${r.ratio.toFixed(3)}x | ${r.ratio <= GOAL ? 'met' : '**not met**'} |`,
  ),
].join('\n');
console.log(`\n${table}\n`);
if (!process.env.BENCH_NO_DOCS) {
  const how =
    METHOD === 'cpu'
      ? `the process's CPU time (\`process.cpuUsage\`) over ${COUNT} requests after ${WARM} of warm-up, pinned to CPU 0 (\`taskset\`); ${ROUNDS} rounds, alternating which goes first; medians, and the median of the ratios within rounds`
      : `instructions under \`valgrind --tool=callgrind\`: ${WARM} requests of warm-up, then ${SHORT} in one run and ${LONG} in another; the difference of the two counts over ${LONG - SHORT} is one request (start-up and warm-up cancel out)`;
  writeSuiteSection(
    docFile(repo),
    `metrics-cost-${METHOD}`,
    `## Metrics: cost per request (${METHOD})

Generated by \`BENCH_METHOD=${METHOD} pnpm bench:metrics-cost\` (\`bench/metrics-cost.mjs\`) on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, Node ${process.version}.

- **Method**: host and client in one process (\`bench/servers/ack-loop.mjs\`), one keep-alive
  connection, one request at a time; ${how}. The client's share is the same in both columns, so
  the difference is what metrics add; CPU time and instructions move far less with other work on
  the machine than requests/s do.
- **Goal**: metrics on cost at most 3% (on / off ≤ ${GOAL}x); the requests/s pairs are in "Metrics
  on and off".

${table}`,
  );
  console.log(`bench: wrote the metrics-cost-${METHOD} section of docs/benchmarks.md`);
}
