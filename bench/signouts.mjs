// `pnpm bench:signouts`: the sign-out store at scale (docs/dev-sign-in.md "Sign-out holds",
// docs/benchmarks.md "Sign-out store"). With the built host, on a throw-away file of
// SIGNOUT_RECORDS live records (1,000,000 by default), it measures:
//   - the start-up read: wall time until the store is loaded, and the longest the event loop was
//     held meanwhile (the gap between two turns, and monitorEventLoopDelay's maximum);
//   - a lookup: a signed-out id (in memory) and an id never signed out (a stat of the file);
//   - a sign-out: one append to the file, sequentially;
//   - the memory the store takes (RSS before and after the read);
//   - a compaction: the same live records beside more expired ones, compacted by the sign-out that
//     finds them outnumbered, and the longest the event loop was held meanwhile.
// Bounded: SIGNOUT_RECORDS records, a fixed number of lookups and sign-outs.
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createRevocationList } from '../packages/host/dist/sign-in/revocations.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const work = path.join(here, '.work-signouts');
const RECORDS = Number(process.env.SIGNOUT_RECORDS ?? 1_000_000);
const HITS = 200_000;
const MISSES = 5_000;
const SIGN_OUTS = 2_000;

const idOf = (i) => i.toString(16).padStart(32, '0');

/** RECORDS live records, and `expired` records of other ids whose cookies have expired. */
function writeFile(file, expired = 0) {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const until = Date.now() + 24 * 3_600_000;
  const past = Date.now() - 3_600_000;
  const fd = fs.openSync(file, 'w');
  for (let start = 0; start < RECORDS + expired; start += 50_000) {
    const lines = [];
    for (let i = start; i < Math.min(RECORDS + expired, start + 50_000); i++)
      lines.push(i < RECORDS ? `\n[${until},"${idOf(i)}"]` : `\n[${past},"x${idOf(i)}"]`);
    fs.writeSync(fd, lines.join(''));
  }
  fs.closeSync(fd);
}

/** A file whose expired records outnumber its live ones: the next sign-out compacts it. */
async function compaction(file) {
  writeFile(file, RECORDS + 1_000);
  const before = fs.statSync(file).size;
  const list = createRevocationList({ file });
  await list.loaded();
  const run = await watchingTheLoop(() => list.revoke('compacting', Date.now() + 3_600_000));
  const lines = fs.readFileSync(file, 'latin1').split('\n').length;
  const again = createRevocationList({ file });
  await again.loaded();
  for (let i = 0; i < RECORDS; i += 997)
    if (!(await again.isRevoked(idOf(i)))) throw new Error(`live sign-out ${i} lost by the compaction`);
  if (lines > RECORDS + 3) throw new Error(`the compaction kept ${lines} lines`);
  return { ...run, before, after: fs.statSync(file).size };
}

/** Runs `body` while timing every turn of the event loop; gives its result and the longest gap. */
async function watchingTheLoop(body) {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let longest = 0;
  let longestCpu = 0;
  let running = true;
  // Wall time between two turns counts the time a busy machine did not run the process at all; the
  // process's CPU time over the same gap does not (it counts the file reads' thread too: an upper bound).
  const tick = () => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    longest = Math.max(longest, now - last);
    longestCpu = Math.max(longestCpu, (cpu.user + cpu.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const result = await body();
  const ms = performance.now() - started;
  running = false;
  histogram.disable();
  return { result, ms, longestTurnMs: longest, longestTurnCpuMs: longestCpu, maxDelayMs: histogram.max / 1e6 };
}

async function main() {
  const file = path.join(work, '.ack', 'sign-outs');
  writeFile(file);
  const bytes = fs.statSync(file).size;
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let list;
  const load = await watchingTheLoop(async () => {
    list = createRevocationList({ file });
    await list.loaded();
  });
  const rssAfter = process.memoryUsage().rss;

  let t = performance.now();
  let refused = 0;
  for (let i = 0; i < HITS; i++) if (await list.isRevoked(idOf((i * 7919) % RECORDS))) refused++;
  const hitNs = ((performance.now() - t) * 1e6) / HITS;
  if (refused !== HITS) throw new Error(`only ${refused} of ${HITS} signed-out ids refused`);

  t = performance.now();
  for (let i = 0; i < MISSES; i++)
    if (await list.isRevoked(`never-${i}`)) throw new Error('an id never signed out refused');
  const missUs = ((performance.now() - t) * 1e3) / MISSES;

  const until = Date.now() + 3_600_000;
  const signOuts = await watchingTheLoop(async () => {
    for (let i = 0; i < SIGN_OUTS; i++) await list.revoke(`new-${i}`, until);
  });
  const restart = await watchingTheLoop(async () => {
    const again = createRevocationList({ file });
    await again.loaded();
    return again.isRevoked(`new-${SIGN_OUTS - 1}`);
  });
  if (restart.result !== true) throw new Error('a sign-out was not read back after a restart');
  list = undefined;
  global.gc?.();
  const compacted = await compaction(file);

  const mb = (n) => (n / 1024 / 1024).toFixed(0);
  const rows = [
    ['records in the file', `${RECORDS.toLocaleString('en')} (${mb(bytes)} MiB)`],
    ['start-up read', `${load.ms.toFixed(0)} ms`],
    ['longest event-loop turn during the read, CPU time', `${load.longestTurnCpuMs.toFixed(1)} ms`],
    [
      'longest event-loop turn during the read, wall time',
      `${load.longestTurnMs.toFixed(1)} ms (event-loop delay max ${load.maxDelayMs.toFixed(1)} ms)`,
    ],
    ['memory of the store (RSS after the read − before)', `${mb(rssAfter - rssBefore)} MiB`],
    ['lookup, signed-out id', `${hitNs.toFixed(0)} ns`],
    ['lookup, id never signed out (a stat of the file)', `${missUs.toFixed(1)} µs`],
    [
      'sign-out (one append, sequential)',
      `${((signOuts.ms * 1e3) / SIGN_OUTS).toFixed(0)} µs; longest turn ${signOuts.longestTurnCpuMs.toFixed(1)} ms CPU, ${signOuts.longestTurnMs.toFixed(1)} ms wall`,
    ],
    [
      'restart: read again, the last sign-out refused',
      `${restart.ms.toFixed(0)} ms; longest turn ${restart.longestTurnCpuMs.toFixed(1)} ms CPU, ${restart.longestTurnMs.toFixed(1)} ms wall`,
    ],
    [
      'compaction: expired records dropped by the sign-out that finds them outnumbered',
      `${mb(compacted.before)} MiB to ${mb(compacted.after)} MiB in ${compacted.ms.toFixed(0)} ms; longest turn ${compacted.longestTurnCpuMs.toFixed(1)} ms CPU, ${compacted.longestTurnMs.toFixed(1)} ms wall`,
    ],
  ];
  const [load1] = (await import('node:os')).loadavg();
  console.log(
    `Sign-out store, node ${process.version}, load average ${load1.toFixed(1)} on ${(await import('node:os')).cpus().length} cores`,
  );
  console.log('| measure | value |\n|---|---|');
  for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
  fs.rmSync(work, { recursive: true, force: true });
}

await main();
