// A signed-in request: our host with its session on Redis, then on MariaDB (sessions shared
// between processes), signed in by dev sign-in, asked `GET /wwwroot/api/index/guid` with its
// cookies; beside Express 5 + express-session with the same store (connect-redis; our host's own
// MySQL store), signed in and asked the same. wrk (64 connections) on CPU 1, servers on CPU 0,
// ratios within pairs. Goal: our host at least 0.8x the Express peer.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from '../lib/files.mjs';
import { startNode } from '../lib/servers.mjs';
import { CONNECTIONS, wrk, wrkVersion, writeScripts } from '../lib/wrk.mjs';
import { cpuSeconds, pinning } from '../lib/cpu.mjs';
import { paired, pairedTable } from '../lib/paired.mjs';
import { docFile, writeSuiteSection } from '../lib/doc-sections.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(here, '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 1);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const GOAL = 0.8;
const TARGET = '/wwwroot/api/index/guid';

export const id = 'session';
const CELLS = [
  {
    id: 'session-redis',
    label: 'signed-in request, Redis',
    store: 'redis',
    state: { CacheType: 'Redis', RedisConnectionString: '127.0.0.1:6379', RedisKeyPrefix: 'bench-ack:session:' },
  },
  {
    id: 'session-mysql',
    label: 'signed-in request, MariaDB',
    store: 'mysql',
    state: {
      CacheType: 'MySql',
      MySqlConnectionString: 'Server=127.0.0.1;Port=3306;Database=test;Uid=root;Pwd=',
      MySqlSchemaName: 'bench_ack',
      MySqlTableName: 'SessionData',
    },
  },
];
export const cellIds = CELLS.map((c) => c.id);

function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.once('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** Signs in by the dev sign-in POST and returns the `Cookie` header that carries the session. */
async function signIn(url) {
  const res = await request(`${url}/wwwroot/api/dev-account/sign-in`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ UserID: 'bench', UserName: 'Bench', Roles: ['User'] }),
  });
  if (res.status !== 200) throw new Error(`${url}: sign-in answered ${res.status}: ${res.text}`);
  return (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
}

/** The bench home's app folder with its session on this store. */
function appDir(files, cell) {
  const dir = path.join(files.home, `app-${cell.store}`);
  fs.mkdirSync(dir, { recursive: true });
  const settings = JSON.parse(fs.readFileSync(path.join(files.app, 'appsettings.json'), 'utf8'));
  settings.AppSettings.SessionState = { ...settings.AppSettings.SessionState, ...cell.state };
  fs.writeFileSync(path.join(dir, 'appsettings.json'), JSON.stringify(settings, null, 2));
  return dir;
}

function measurer(scripts) {
  const cookies = new Map();
  return async (server, _cell, warm) => {
    const url = server.url + TARGET;
    const cookie = cookies.get(server.name) ?? cookies.set(server.name, await signIn(server.url)).get(server.name);
    const headers = { Cookie: cookie };
    const first = await request(url, { headers });
    const problems = first.status === 200 ? [] : [`answered ${first.status}`];
    const run = { url, seconds: DURATION, script: scripts.plain, headers };
    if (warm) await wrk({ ...run, seconds: Math.min(1, DURATION) });
    const before = cpuSeconds(server.pid);
    const r = await wrk(run);
    const serverCpu = (cpuSeconds(server.pid) - before) / DURATION;
    if (r.wrongStatus) problems.push(`${r.wrongStatus} unexpected statuses`);
    if (r.errors) problems.push(`${r.errors} socket errors`);
    return { value: r.rps, loadCpu: r.wrkCpu, serverCpu, problems };
  };
}

export async function run(only) {
  const version = wrkVersion();
  if (!version) throw new Error('wrk is not installed');
  const work = path.join(here, '.work');
  const files = prepareFiles(work, repo);
  const scripts = writeScripts(path.join(work, 'lua'), {});
  const cells = CELLS.filter((c) => !only || only.includes(c.id));
  console.log(
    `bench session: ${cells.length} cells × ${ROUNDS} rounds × ${DURATION} s; ${version}, ${pinning ? 'server on CPU 0, wrk on CPU 1' : 'not pinned'}`,
  );
  const rows = [];
  for (const cell of cells) {
    const servers = [];
    try {
      const ack = await startNode('ack', path.join(here, 'servers/ack.mjs'), [files.layoutFile, appDir(files, cell)]);
      servers.push(ack);
      const peer = await startNode('express', path.join(here, 'servers/express-session.mjs'), [cell.store]);
      servers.push(peer);
      rows.push(...(await paired({ ack, peers: [peer], cells: [cell], rounds: ROUNDS, measure: measurer(scripts) })));
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  const goal = (row) => `≥ ${GOAL}x express: ${row.ratios.express >= GOAL ? 'met' : '**not met**'}`;
  const table = pairedTable(rows, ['ack', 'express'], { loadName: 'wrk', goal });
  console.log(`\n${table}\n`);
  if (!only && !process.env.BENCH_NO_DOCS) {
    writeSuiteSection(docFile(repo), id, section(table, version));
    console.log('bench session: wrote its section of docs/benchmarks.md');
  }
}

function section(table, version) {
  return `## Signed-in requests

Generated by \`BENCH_ONLY=session pnpm bench\` (\`bench/suites/session.mjs\`) on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, Node ${process.version}, ${version}; ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${DURATION} s per measurement.

- **Our host**: the static suite's home with \`SessionState:CacheType\` \`Redis\` (127.0.0.1:6379),
  then \`MySql\` (MariaDB on 127.0.0.1:3306); signed in once by the dev sign-in POST, then asked
  \`GET ${TARGET}\` (the index helper's fresh UUID) with the session and sign-in cookies: every
  request reads the session from the store and the signed-in member from it.
- **Express**: Express 5 + express-session with the options our host gives it, over the same
  store: connect-redis on node-redis, and our host's own MySQL store (knex + mysql2); a sign-in
  route that regenerates the session and keeps the member in it, and the same GET answering a
  fresh UUID to a session that holds a member (\`bench/servers/express-session.mjs\`).
- **Load**: wrk, one thread, ${CONNECTIONS} keep-alive connections, all sending the one signed-in
  cookie, pinned to CPU 1; servers on CPU 0 (Redis and MariaDB run unpinned). Pairs as in the
  other suites; **goal**: our host ≥ ${GOAL}x Express.

${table}`;
}
