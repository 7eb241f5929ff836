// The databases of the test run (CONTRIBUTING.md "What the test run needs"). The session-store
// tests talk to a real MariaDB, PostgreSQL and Redis. Each is used where it answers: at the address
// in ACK_TEST_MYSQL / ACK_TEST_POSTGRES / ACK_TEST_REDIS (`host:port`), else its default port on
// 127.0.0.1. Where none answers, this file (vitest's global set-up) starts a private server from the
// installed program in a temporary folder on a free port, points the tests at it through the same
// variable, and removes it when the run ends. Tests read the addresses with `testDatabases()` from
// `@ack/host/test-support`.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const KINDS = [
  { kind: 'mysql', label: 'MariaDB', env: 'ACK_TEST_MYSQL', port: 3306, server: 'mariadbd', pkg: 'mariadb-server' },
  {
    kind: 'postgres',
    label: 'PostgreSQL',
    env: 'ACK_TEST_POSTGRES',
    port: 5432,
    server: 'postgres',
    pkg: 'postgresql',
  },
  { kind: 'redis', label: 'Redis', env: 'ACK_TEST_REDIS', port: 6379, server: 'redis-server', pkg: 'redis-server' },
];

/** Where each database is looked for: the variable's `host:port`, or the default port on loopback. */
export function databaseTargets(env = process.env) {
  return KINDS.map((k) => {
    const given = env[k.env]?.trim();
    const m = given ? /^\[?([^\]]*?)\]?:(\d+)$/.exec(given) : null;
    return { ...k, host: m ? m[1] : '127.0.0.1', port: m ? Number(m[2]) : k.port, given: !!given };
  });
}

/** True when something accepts a TCP connection there within a second. */
export function reachable({ host, port }) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const which = (name) => {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};
const firstExisting = (...paths) => paths.find((p) => p && fs.existsSync(p));
const postgresBin = (name) => {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return firstExisting(...versions.map((v) => path.join(root, v, 'bin', name)), which(name));
};

/** The server program for a kind, or undefined when it is not installed. */
export function serverBinary(kind) {
  if (kind === 'redis') return which('redis-server');
  if (kind === 'mysql')
    return firstExisting(which('mariadbd'), '/usr/sbin/mariadbd', which('mysqld'), '/usr/sbin/mysqld');
  if (kind === 'postgres') return postgresBin('postgres') && postgresBin('initdb');
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReachable(target, child, output, limitMs = 60_000) {
  const until = Date.now() + limitMs;
  while (!(await reachable(target))) {
    if (child.exitCode !== null) throw new Error(`${target.label} exited at start: ${output()}`);
    if (Date.now() > until) throw new Error(`${target.label} did not start in ${limitMs / 1000} s: ${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const isRoot = process.getuid?.() === 0;
/** Servers that refuse to run as root (PostgreSQL) run as its own system user when we are root. */
const asUser = (user, command, args) => (isRoot ? ['runuser', ['-u', user, '--', command, ...args]] : [command, args]);

function start(label, command, args, options) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let out = '';
  child.stdout.on('data', (d) => (out = (out + d).slice(-4000)));
  child.stderr.on('data', (d) => (out = (out + d).slice(-4000)));
  return { child, output: () => out };
}

async function startPrivate(target, dir) {
  const port = await freePort();
  const at = { ...target, host: '127.0.0.1', port };
  let server;
  if (target.kind === 'redis') {
    server = start('Redis', serverBinary('redis'), [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ]);
  } else if (target.kind === 'mysql') {
    const data = path.join(dir, 'data');
    const install = firstExisting(
      which('mariadb-install-db'),
      '/usr/bin/mariadb-install-db',
      which('mysql_install_db'),
    );
    execFileSync(
      install,
      [
        '--no-defaults',
        `--datadir=${data}`,
        '--auth-root-authentication-method=normal',
        ...(isRoot ? ['--user=root'] : []),
      ],
      {
        stdio: 'ignore',
      },
    );
    // No grant tables: the tests connect as root without a password, as to the usual test server.
    server = start('MariaDB', serverBinary('mysql'), [
      '--no-defaults',
      `--datadir=${data}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${path.join(dir, 'mysqld.sock')}`,
      `--pid-file=${path.join(dir, 'mysqld.pid')}`,
      '--skip-grant-tables',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=32M',
      ...(isRoot ? ['--user=root'] : []),
    ]);
    await waitUntilReachable(at, server.child, server.output);
    const client = firstExisting(which('mariadb'), which('mysql'));
    execFileSync(
      client,
      ['--no-defaults', '-h127.0.0.1', `-P${port}`, '-uroot', '-e', 'CREATE DATABASE IF NOT EXISTS test'],
      {
        stdio: 'ignore',
      },
    );
  } else {
    const data = path.join(dir, 'pg');
    if (isRoot) fs.chownSync(dir, ...idsOf('postgres'));
    execFileSync(
      ...asUser('postgres', postgresBin('initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync']),
      {
        stdio: 'ignore',
      },
    );
    server = start(
      'PostgreSQL',
      ...asUser('postgres', postgresBin('postgres'), [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
      ]),
    );
    await waitUntilReachable(at, server.child, server.output);
    const psql = firstExisting(postgresBin('psql'), which('psql'));
    for (let attempt = 0; ; attempt++) {
      try {
        execFileSync(psql, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', 'CREATE DATABASE test'], {
          stdio: 'ignore',
        });
        break;
      } catch (err) {
        // Accepting connections a moment before it takes queries.
        if (attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  await waitUntilReachable(at, server.child, server.output);
  return { at, child: server.child };
}

function idsOf(user) {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line) throw new Error(`no system user ${user}`);
  const [, , uid, gid] = line.split(':');
  return [Number(uid), Number(gid)];
}

/** vitest global set-up: start what does not answer; the returned function stops and removes it. */
export default async function setup() {
  const started = [];
  const dirs = [];
  for (const target of databaseTargets()) {
    if (await reachable(target)) {
      process.env[target.env] = `${target.host}:${target.port}`;
      continue;
    }
    if (!serverBinary(target.kind))
      throw new Error(
        `${target.label} does not answer at ${target.host}:${target.port} and ${target.server} is not installed (apt-get install ${target.pkg})`,
      );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ack-test-${target.kind}-`));
    dirs.push(dir);
    const { at, child } = await startPrivate(target, dir);
    started.push(child);
    process.env[target.env] = `${at.host}:${at.port}`;
    console.error(
      `test databases: a private ${target.label} on ${at.host}:${at.port} (none answered at ${target.host}:${target.port})`,
    );
  }
  return async () => {
    await Promise.all(
      started.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', resolve);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  };
}
