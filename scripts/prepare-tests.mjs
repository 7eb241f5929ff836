#!/usr/bin/env node
// The first step of `pnpm test` (CONTRIBUTING.md "What the test run needs"): before anything is
// installed or built, check every program the suite drives. Missing Debian packages are installed
// when this user may (root with apt-get, unless ACK_TEST_NO_INSTALL is set); otherwise one line
// names what to install and no test runs. Only Node's own modules are used here: nothing is installed yet.
//
// The databases: MariaDB, PostgreSQL and Redis are used where they answer (at ACK_TEST_MYSQL,
// ACK_TEST_POSTGRES, ACK_TEST_REDIS, default 127.0.0.1:3306, :5432, :6379). Where one does not,
// the test run starts a private one (scripts/test-databases.mjs), so its server program is needed
// here too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { databaseTargets, reachable, serverBinary } from './test-databases.mjs';

const onPath = (name) => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const anyOf = (...paths) => paths.some((p) => (p.startsWith('/') ? fs.existsSync(p) : onPath(p)));

const chromium = process.env.ACK_CHROMIUM_PATH?.trim() || '/usr/bin/chromium';

/** What the suite drives, the Debian package that brings it, and why. */
const TOOLS = [
  {
    name: 'chromium',
    pkg: 'chromium',
    why: 'browser tests',
    ok: () => fs.existsSync(chromium),
    own: !!process.env.ACK_CHROMIUM_PATH,
  },
  { name: 'curl', pkg: 'curl', why: 'HTTP/2 client tests', ok: () => onPath('curl') },
  { name: 'openssl', pkg: 'openssl', why: 'test certificates', ok: () => onPath('openssl') },
  { name: 'caddy', pkg: 'caddy', why: 'the HTTP/3 edge tests', ok: () => onPath('caddy') },
  { name: 'gtlsclient', pkg: 'ngtcp2-client', why: 'the HTTP/3 client', ok: () => onPath('gtlsclient') },
  {
    name: 'nginx',
    pkg: 'nginx-light',
    why: 'the nginx edge and cluster tests',
    ok: () => anyOf('nginx', '/usr/sbin/nginx'),
  },
  {
    name: 'prometheus',
    pkg: 'prometheus',
    why: 'the metrics scrape test (prometheus and promtool)',
    ok: () => onPath('prometheus') && onPath('promtool'),
  },
  { name: 'script', pkg: 'bsdutils', why: 'the CLI progress test (a pseudo-terminal)', ok: () => onPath('script') },
  {
    name: 'redis-server',
    pkg: 'redis-server',
    why: 'the session-store outage test',
    ok: () => serverBinary('redis') !== undefined,
  },
];

const databases = databaseTargets();
for (const db of databases) {
  if (await reachable(db)) continue;
  TOOLS.push({
    name: db.server,
    pkg: db.pkg,
    why: `a private ${db.label} (none answers at ${db.host}:${db.port}; set ${db.env} to use another)`,
    ok: () => serverBinary(db.kind) !== undefined,
  });
}

let missing = TOOLS.filter((t) => !t.ok());
// ACK_TEST_NO_INSTALL=1: only say what is missing, even as root.
const mayInstall = process.getuid?.() === 0 && onPath('apt-get') && !process.env.ACK_TEST_NO_INSTALL;
const installable = missing.filter((t) => !t.own);
if (installable.length > 0 && mayInstall) {
  const pkgs = [...new Set(installable.map((t) => t.pkg))];
  console.error(
    `pnpm test: installing ${pkgs.join(', ')} (apt-get) for ${installable.map((t) => t.why).join('; ')}...`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    execFileSync('apt-get', ['install', '-y', '-qq', ...pkgs], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    });
  } catch {
    // Reported below as missing.
  }
  missing = TOOLS.filter((t) => !t.ok());
}
if (missing.length > 0) {
  const what = missing.map((t) =>
    t.own ? `${t.name} at ${chromium} (ACK_CHROMIUM_PATH)` : `${t.name} (${t.pkg}: ${t.why})`,
  );
  const pkgs = [...new Set(missing.filter((t) => !t.own).map((t) => t.pkg))];
  console.error(
    `pnpm test needs ${what.join(', ')}${pkgs.length ? `: sudo apt-get install ${pkgs.join(' ')}` : ''}, then run it again.`,
  );
  process.exit(1);
}
