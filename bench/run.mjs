// `pnpm bench`: every suite, one after the other, each in its own file under bench/suites/ (see
// docs/benchmarks.md for the method of each):
//
//   static   static files over HTTP/1.1 beside the Node ceiling, nginx, Express, sirv, fastify
//   h2       HTTP/2 over TLS (h2load) beside nginx, bare Node http2 (stream and compatibility API), Caddy
//   https    HTTPS with HTTP/1.1 (wrk over TLS) beside bare Node HTTPS and nginx
//   startup  `ack serve` to its first 200 beside Express; `ack --version` / `ack sync upload --help` beside `node -e 0`
//   session  a signed-in request (session on Redis, on MariaDB) beside Express 5 + express-session
//   reload   live reload: from the upload's answer to the stylesheet swapped in Chromium
//   metrics  metrics on beside metrics off (1 KiB hit, 304), with the Node ceiling
//
//   BENCH_ONLY=h2,startup-serve   only these suites and cells (a suite's name selects all its cells)
//   BENCH_DURATION, BENCH_ROUNDS  seconds per measurement and rounds (each suite says how it uses them)
//   BENCH_NO_DOCS=1               do not rewrite docs/benchmarks.md
// A suite run with all its cells rewrites its own section of docs/benchmarks.md; one run with
// some of its cells only prints its table.
// First, before any suite's module runs: the programs they need.
import './lib/preflight.mjs';
import * as staticSuite from './suites/static.mjs';
import * as h2 from './suites/h2.mjs';
import * as https from './suites/https.mjs';
import * as startup from './suites/startup.mjs';
import * as session from './suites/session.mjs';
import * as reload from './suites/reload.mjs';
import * as metrics from './suites/metrics.mjs';

const SUITES = [staticSuite, h2, https, startup, session, reload, metrics];
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
if (only) {
  const known = new Set(SUITES.flatMap((s) => [s.id, ...s.cellIds]));
  const unknown = only.filter((o) => !known.has(o));
  if (unknown.length) {
    console.error(`bench: BENCH_ONLY names no suite or cell: ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
    process.exit(2);
  }
}

for (const suite of SUITES) {
  // undefined: the whole suite; else the cells named (or all of them when the suite is named).
  const cells = !only || only.includes(suite.id) ? undefined : suite.cellIds.filter((c) => only.includes(c));
  if (cells?.length === 0) continue;
  const started = Date.now();
  console.log(`\nbench: suite ${suite.id}`);
  try {
    await suite.run(cells);
  } catch (err) {
    console.error(`bench: suite ${suite.id} failed: ${err.stack ?? err}`);
    process.exitCode = 1;
  }
  console.log(`bench: suite ${suite.id} took ${Math.round((Date.now() - started) / 1000)} s`);
}
