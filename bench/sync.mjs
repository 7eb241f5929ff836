// `pnpm bench:sync`: `ack sync upload <dir>` side by side with rsync (docs/benchmarks.md "Sync").
// A built host and an rsync daemon, both on 127.0.0.1, each writing into its own folder under
// bench/.work-sync (the same disk). Cases: a no-op push of a 5,000-file tree already on both, the
// same tree with 50 files changed and 10 deleted (--delete), the first push of the whole tree, and
// one 200 MiB file beside `dd if=/dev/zero ... conv=fsync` on the same disk (the host flushes every
// file it writes, so the disk's own figure includes the flush too) and beside rsync -W, with and
// without --fsync, and with a SHA-1 whole-file check (ack checks the file by SHA-256 on both sides). ack's local digest cache lives
// under bench/.work-sync (XDG_CACHE_HOME), warm after the first push as it would be for a user; the
// no-op is also measured with --rehash (every local file read and hashed, as rsync --checksum does). Each figure is the
// median of SYNC_ROUNDS rounds (default 3); a ratio is ack's time over the peer's. The whole run is
// bounded by SYNC_TIMEOUT_S (default 1200): past it, every command is stopped and the run fails.
// SYNC_ONLY picks cases by name (`noop,changed,first,big,release`; default all of them). The host
// has releases on (docs/releases.md): the rows beside rsync push file by file (--no-release, as to
// a host without releases); the `release` case pushes the same tree as releases under another
// prefix: the first push (beside `rsync -rt --fsync`: the host flushes every file it writes), a
// no-op (beside `rsync -r --checksum`), the same no-op right after a release, 50 changed files, the first push to two hosts in one
// command beside two one-host pushes run at once, and the switch back and forth on the host, as
// the host times it (its answer's `Server-Timing`: the switch itself, and all the host did).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const work = path.join(here, '.work-sync');
const home = path.join(work, 'home');
/** A second host's home, for the two-host release. */
const home2 = path.join(work, 'home2');
const ROUNDS = Number(process.env.SYNC_ROUNDS ?? 3);
const FILES = Number(process.env.SYNC_FILES ?? 5000);
const BIG_MIB = Number(process.env.SYNC_BIG_MIB ?? 200);
const ONLY = new Set((process.env.SYNC_ONLY ?? 'noop,changed,first,big,release').split(',').map((s) => s.trim()));
const DEADLINE = Date.now() + Number(process.env.SYNC_TIMEOUT_S ?? 1200) * 1000;
const TOKEN = 'bench-sync-token';
const ACK = path.join(repo, 'packages/cli/dist/bin.js');
const contracts = path.join(home, 'contracts', 'wwwroot');
const contracts2 = path.join(home2, 'contracts', 'wwwroot');
const rsyncDest = path.join(work, 'rsync-dest');
const src = path.join(work, 'src');

const write = (p, data) => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, data);
};
const bytes = (n, seed) => Buffer.from(Array.from({ length: n }, (_, i) => 97 + ((i * 7 + seed * 13) % 26)));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
};
/** Runs a command to its end, within what is left of the run's time. */
const run = (cmd, args, env = {}) => {
  const left = DEADLINE - Date.now();
  if (left <= 0) throw new Error(`out of time (SYNC_TIMEOUT_S) before ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    timeout: left,
    killSignal: 'SIGKILL',
  });
  if (r.error?.code === 'ETIMEDOUT') throw new Error(`out of time (SYNC_TIMEOUT_S) in ${cmd} ${args.join(' ')}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
};

function prepare() {
  fs.rmSync(work, { recursive: true, force: true });
  for (const h of [home, home2]) writeHome(h);
  fs.mkdirSync(rsyncDest, { recursive: true });
  // 5,000 files of 1 to 20 KiB in 50 folders.
  for (let i = 0; i < FILES; i++)
    write(path.join(src, `d${i % 50}`, `f${i}.html`), bytes(1024 + ((i * 977) % (19 * 1024)), i));
}

function writeHome(home) {
  const settings = JSON.parse(fs.readFileSync(path.join(repo, 'examples/basic/app/appsettings.json'), 'utf8'));
  settings.AppSettings.LoadModules = ['wwwroot'];
  settings.AppSettings.Security = { ...settings.AppSettings.Security, MaxContractSyncFileBytes: (BIG_MIB + 10) << 20 };
  settings.Kestrel = {
    ...settings.Kestrel,
    Limits: { ...settings.Kestrel?.Limits, MaxRequestBodySize: (BIG_MIB + 20) << 20 },
  };
  settings.Serilog.WriteTo = [];
  write(path.join(home, 'app/appsettings.json'), JSON.stringify(settings, null, 2));
  write(
    path.join(home, 'modules/wwwroot/module.json'),
    JSON.stringify({
      ModuleID: 'wwwroot',
      ModuleConfig: {
        ContractBasePath: '../contracts/wwwroot',
        WWWRootBasePath: '../www',
        FileSyncTokens: [TOKEN],
        IsEnabledReleases: true,
      },
    }),
  );
  fs.mkdirSync(path.join(home, 'www'), { recursive: true });
  fs.mkdirSync(path.join(home, 'contracts', 'wwwroot'), { recursive: true });
}

function startHost(home) {
  const layout = path.join(home, 'layout.json');
  fs.writeFileSync(layout, JSON.stringify({ app: path.join(home, 'app') }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, 'servers/ack.mjs'), layout], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child.once('exit', (code) => reject(new Error(`host exited (${code})`)));
    readline
      .createInterface({ input: child.stdout })
      .once('line', (line) => resolve({ child, url: JSON.parse(line).url }));
  });
}

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

const connects = (port) =>
  new Promise((r) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      r(true);
    });
    socket.once('error', () => r(false));
  });

/** An rsync daemon on 127.0.0.1 as the current user, its config in a temporary folder. */
async function startRsyncd() {
  const port = await freePort();
  const confDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-bench-rsyncd-'));
  const conf = path.join(confDir, 'rsyncd.conf');
  fs.writeFileSync(
    conf,
    [
      'use chroot = no',
      `uid = ${process.getuid()}`,
      `gid = ${process.getgid()}`,
      `pid file = ${path.join(confDir, 'rsyncd.pid')}`,
      `log file = ${path.join(confDir, 'rsyncd.log')}`,
      '[bench]',
      `path = ${rsyncDest}`,
      'read only = no',
      '',
    ].join('\n'),
  );
  const child = spawn(
    'rsync',
    ['--daemon', '--no-detach', `--config=${conf}`, `--port=${port}`, '--address=127.0.0.1'],
    { stdio: 'ignore' },
  );
  const exited = new Promise((r) => child.once('exit', () => r(true)));
  for (let i = 0; ; i++) {
    if (await connects(port)) break;
    if (i >= 100 || (await Promise.race([exited, new Promise((r) => setTimeout(() => r(false), 50))])))
      throw new Error(`the rsync daemon did not start (see ${path.join(confDir, 'rsyncd.log')})`);
  }
  return { child, confDir, target: `rsync://127.0.0.1:${port}/bench/` };
}

/**
 * CPU seconds used so far (Linux; NaN elsewhere) by the commands this script ran and waited for
 * (its children: ack's command, rsync's client, dd) and by the servers (the host; the rsync daemon
 * and the connection processes it has reaped). On a busy machine a command's time also counts the
 * waits for a core; its CPU time does not, so the two together tell load from work.
 */
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const procTicks = (pid, fields) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // field 3 onwards
    return fields.reduce((sum, f) => sum + Number(after[f - 3]), 0);
  } catch {
    return NaN;
  }
};
let servers = [];
/** The servers' part alone: the host's own CPU beside the command's tells which side to look at. */
const serverSeconds = () => servers.reduce((sum, pid) => sum + procTicks(pid, [14, 15, 16, 17]), 0) / TICKS;
const cpuSeconds = () => procTicks('self', [16, 17]) / TICKS + serverSeconds();
/** Waits without a child process (a child's CPU would count). */
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const rows = [];
/** Figures the host timed itself (`Server-Timing`), in milliseconds: [label, every sample]. */
const hostRows = [];
/**
 * Runs each case ROUNDS times (after `setup(case)`), keeping the median time of each, and the
 * median CPU time (the rsync daemon reaps its connection's processes just after the client ends:
 * the CPU is read a moment later).
 */
const measure = (label, setup, cases) => {
  const t = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const c = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const sc = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const [k, fn] of Object.entries(cases)) {
      setup(k);
      // Every case starts with nothing of another's left to write: on ext4 (data=ordered) a flush
      // also writes out other files' new data, so a case that flushes (ack, dd conv=fsync) would
      // otherwise pay for what the case before it (rsync, which never flushes) left in memory.
      spawnSync('sync');
      pause(100);
      const before = cpuSeconds();
      const serverBefore = serverSeconds();
      t[k].push(time(fn));
      pause(100);
      c[k].push(cpuSeconds() - before);
      sc[k].push(serverSeconds() - serverBefore);
    }
  const m = Object.fromEntries(
    Object.entries(t).map(([k, v]) => [k, { time: median(v), cpu: median(c[k]), server: median(sc[k]) }]),
  );
  rows.push({ label, ...m });
  console.log(
    label,
    Object.entries(m)
      .map(
        ([k, v]) => `${k} ${v.time.toFixed(3)} s (CPU ${v.cpu.toFixed(2)} s, of it servers ${v.server.toFixed(2)} s)`,
      )
      .join(', '),
  );
};

const rsyncVersion = run('rsync', ['--version']).split('\n')[0];
prepare();
const { child: host, url } = await startHost(home);
const second = ONLY.has('release') ? await startHost(home2) : undefined;
const rsyncd = await startRsyncd();
servers = [host.pid, rsyncd.child.pid, ...(second ? [second.child.pid] : [])];
const ackEnv = { ACK_SYNC_TOKEN: TOKEN, XDG_CACHE_HOME: path.join(work, 'cache') };
const ack = (...args) =>
  run(process.execPath, [ACK, 'sync', 'upload', ...args, '--module', 'wwwroot', '--url', url], ackEnv);
const ackTree = (...extra) => ack(src, '--path', 'B', '--no-release', ...extra);
const ackRelease = (...extra) => ack(src, '--path', 'R/', ...extra);
/** One request to the host's release endpoints, timed from request to answer (curl). */
const releaseCall = (method, route) =>
  run('curl', [
    '-sf',
    '-X',
    method,
    '-u',
    `${TOKEN}:`,
    `${url}/wwwroot/api/sync/releases${route}${route.includes('?') ? '&' : '?'}moduleName=wwwroot&path=R/`,
  ]);
/**
 * The same, with the host's own timing of it (`Server-Timing`, docs/wire-formats.md "Sync
 * releases"): milliseconds by name.
 */
const releaseTimed = (method, route) => {
  const out = run('curl', [
    '-sf',
    '-o',
    '/dev/null',
    '-D',
    '-',
    '-X',
    method,
    '-u',
    `${TOKEN}:`,
    `${url}/wwwroot/api/sync/releases${route}${route.includes('?') ? '&' : '?'}moduleName=wwwroot&path=R/`,
  ]);
  const header = /^server-timing:\s*(.*)$/im.exec(out)?.[1] ?? '';
  return Object.fromEntries([...header.matchAll(/([a-z]+);dur=([0-9.]+)/g)].map((m) => [m[1], Number(m[2])]));
};
const rsync = (...args) => run('rsync', [...args, `${src}/`, rsyncd.target]);
/** A shell word. */
const quote = (a) => `'${a.replace(/'/g, `'\\''`)}'`;
/**
 * Commands run at once, each to its end (the way two one-host pushes run side by side); fails
 * when any one does. `run` bounds the whole by what is left of the run's time.
 */
const together = (...commands) =>
  run(
    'sh',
    [
      '-c',
      [
        'f=0',
        ...commands.map((c, i) => `${c.map(quote).join(' ')} >/dev/null & p${i}=$!`),
        ...commands.map((_, i) => `wait $p${i} || f=1`),
        'exit $f',
      ].join('\n'),
    ],
    ackEnv,
  );
/**
 * Empties both destinations for a first push. The old trees are moved aside, not deleted, until the
 * run ends: on an ext4 file system without a journal, the kernel skips inodes freed within the last
 * 30 seconds or so when it creates a file, checking each one, so creating thousands of files just
 * after deleting thousands costs several times the creation itself (docs/benchmarks.md "Sync"),
 * and whichever side created first would pay for the other's deletion.
 */
let cleared = 0;
const clear = () => {
  const trash = path.join(work, 'trash');
  fs.mkdirSync(trash, { recursive: true });
  for (const tree of [path.join(contracts, 'B'), rsyncDest])
    if (fs.existsSync(tree)) fs.renameSync(tree, path.join(trash, String(cleared++)));
  fs.mkdirSync(rsyncDest);
};

let failed = false;
try {
  // Both destinations hold the tree (rsync with -t, so that its size-and-time check can match).
  if (ONLY.has('noop') || ONLY.has('changed')) {
    ackTree();
    rsync('-rt');
    // The local digest cache keeps no file written within its last 2 s (docs/sync.md "The local
    // digest cache"): the tree was just written, so one more push, once it is older, fills the
    // cache as a user's would be.
    spawnSync('sleep', ['2']);
    ackTree();
  }
  if (ONLY.has('noop'))
    measure('no-op push (5,000 files)', () => undefined, {
      ack: () => ackTree(),
      'ack --rehash': () => ackTree('--rehash'),
      'rsync -r --checksum': () => rsync('-r', '--checksum'),
      'rsync -rt': () => rsync('-rt'),
    });

  if (ONLY.has('changed')) {
    // File n lives in d(n % 50); 50 files change and 10 others go.
    const fileOf = (n) => path.join(src, `d${n % 50}`, `f${n}.html`);
    const changed = Array.from({ length: 50 }, (_, i) => fileOf(i * 97));
    const deleted = Array.from({ length: 10 }, (_, i) => fileOf(i * 89 + 7)).filter((f) => !changed.includes(f));
    const originals = new Map([...changed, ...deleted].map((f) => [f, fs.readFileSync(f)]));
    const restore = () => {
      for (const [f, data] of originals) write(f, data);
    };
    let round = 0;
    // Before each run: both destinations hold the original tree, then 50 files change and 10 go.
    const reset = () => {
      restore();
      ackTree('--delete');
      rsync('-rt', '--delete');
      round++;
      for (const f of changed) fs.writeFileSync(f, bytes(fs.statSync(f).size, round + 1000));
      for (const f of deleted) fs.rmSync(f);
    };
    measure('50 changed, 10 deleted (--delete)', reset, {
      ack: () => ackTree('--delete'),
      'rsync -r --checksum': () => rsync('-r', '--checksum', '--delete'),
      'rsync -rt': () => rsync('-rt', '--delete'),
    });
    restore();
  }

  if (ONLY.has('first'))
    measure('first push (5,000 files, 52 MiB)', clear, {
      ack: () => ackTree(),
      'rsync -r --checksum': () => rsync('-r', '--checksum'),
      'rsync -rt': () => rsync('-rt'),
    });

  if (ONLY.has('big')) bigFile();
  if (ONLY.has('release')) releases();
} catch (err) {
  failed = true;
  console.error(`bench:sync: ${err.message}`);
} finally {
  host.kill('SIGTERM');
  second?.child.kill('SIGTERM');
  rsyncd.child.kill('SIGTERM');
  fs.rmSync(rsyncd.confDir, { recursive: true, force: true });
}

/**
 * The tree as releases under R/: first push, no-op, 50 changed, the first push to two hosts, and
 * the switch back and forth as the host times it.
 */
function releases() {
  const trash = path.join(work, 'trash');
  const clearR = () => {
    fs.mkdirSync(trash, { recursive: true });
    for (const c of [contracts, contracts2])
      for (const tree of [path.join(c, 'R'), path.join(c, '.ack-releases', 'R')])
        if (fs.lstatSync(tree, { throwIfNoEntry: false })) fs.renameSync(tree, path.join(trash, String(cleared++)));
    if (fs.existsSync(rsyncDest)) fs.renameSync(rsyncDest, path.join(trash, String(cleared++)));
    fs.mkdirSync(rsyncDest);
  };
  measure('release: first push (5,000 files, 52 MiB)', clearR, {
    ack: () => ackRelease(),
    'ack --no-release': () => ackRelease('--no-release'),
    'rsync -rt --fsync': () => rsync('-rt', '--fsync'),
  });
  ackRelease();
  rsync('-rt');
  spawnSync('sleep', ['2']);
  ackRelease();
  // Node reads the certificates NODE_EXTRA_CA_CERTS names as it starts, before any of ack runs
  // (tens of milliseconds for a bundle of a hundred): the same push without it, when it is set.
  const withoutExtraCerts = process.env.NODE_EXTRA_CA_CERTS
    ? {
        'ack, NODE_EXTRA_CA_CERTS unset': () =>
          run(process.execPath, [ACK, 'sync', 'upload', src, '--path', 'R/', '--module', 'wwwroot', '--url', url], {
            ...ackEnv,
            NODE_EXTRA_CA_CERTS: undefined,
          }),
      }
    : {};
  measure('release: no-op push (5,000 files)', () => undefined, {
    ack: () => ackRelease(),
    'ack --no-release': () => ackRelease('--no-release'),
    'rsync -r --checksum': () => rsync('-r', '--checksum'),
    ...withoutExtraCerts,
  });
  // The same no-op right after a release of one changed file: the release's stage links and prune
  // move the ctime of every shared file, so this is the listing a user's next push meets
  // (docs/releases.md "The listing after a switch"). Both sides hold the changed file first.
  const first = path.join(src, 'd0', 'f0.html');
  const firstBytes = fs.readFileSync(first);
  let flips = 0;
  const flip = () => {
    write(first, bytes(firstBytes.length, 3000 + flips++));
    // Older than the local digest cache's 2 s (docs/sync.md "The local digest cache") when the
    // release is pushed, as a user's edit would be: the row measures the host's side.
    pause(2100);
    ackRelease();
    rsync('-r', '--checksum');
  };
  measure('release: no-op push right after a release', flip, {
    ack: () => ackRelease(),
    'rsync -r --checksum': () => rsync('-r', '--checksum'),
    ...withoutExtraCerts,
  });
  write(first, firstBytes);
  ackRelease();
  const changed = Array.from({ length: 50 }, (_, i) => path.join(src, `d${(i * 97) % 50}`, `f${i * 97}.html`));
  const originals = new Map(changed.map((f) => [f, fs.readFileSync(f)]));
  let round = 0;
  const change = () => {
    round++;
    for (const f of changed) fs.writeFileSync(f, bytes(fs.statSync(f).size, round + 2000));
  };
  measure('release: 50 changed', change, {
    ack: () => ackRelease(),
    'ack --no-release': () => ackRelease('--no-release'),
  });

  // The switch back and forth between the last two releases (50 files apart), then a stage of
  // the live 5,000-file release and its commit with nothing changed (the digest's floor).
  const list = JSON.parse(releaseCall('GET', '/')).releases;
  const [live, before] = [list[0].id, list[1].id];
  const rollbacks = [];
  measure('release: switch and back on the host (2 x POST rollback, curl)', () => undefined, {
    ack: () => {
      for (let i = 0; i < 5; i++) {
        rollbacks.push(releaseTimed('POST', `/rollback?to=${before}`));
        rollbacks.push(releaseTimed('POST', `/rollback?to=${live}`));
      }
    },
    'curl GET x 10 (no switch)': () => {
      for (let i = 0; i < 10; i++) releaseCall('GET', '/');
    },
  });
  hostRows.push(['release: the switch (manifest, link renamed)', rollbacks.map((t) => t.switch)]);
  hostRows.push([
    'release: rollback, all the host did (switch, prune, announce)',
    rollbacks.map((t) => t.switch + t.prune + t.announce),
  ]);

  const stages = [];
  const commits = [];
  for (let i = 0; i < 5; i++) {
    const id = `r-bench-${i}-${Date.now()}`;
    stages.push(releaseTimed('POST', `/stage?id=${id}`));
    commits.push(releaseTimed('POST', `/stage/${id}/commit`));
  }
  hostRows.push(['release: stage of 5,000 files (hard links)', stages.map((t) => t.stage)]);
  hostRows.push(["release: commit's tree digest, 5,000 files shared", commits.map((t) => t.digest)]);
  hostRows.push([
    'release: commit, all the host did (digest, switch, prune, announce)',
    commits.map((t) => t.digest + t.switch + t.prune + t.announce),
  ]);

  // Two hosts: one command that stages on both and then switches both, beside two one-host
  // pushes run at once (each its own process).
  for (const [f, data] of originals) write(f, data);
  const one = (u) => [process.execPath, ACK, 'sync', 'upload', src, '--path', 'R/', '--module', 'wwwroot', '--url', u];
  measure('release: first push to two hosts', clearR, {
    ack: () => ack(src, '--path', 'R/', '--url', second.url),
    'two one-host pushes at once': () => together(one(url), one(second.url)),
  });
}

function bigFile() {
  const big = path.join(work, 'big.bin');
  run('dd', ['if=/dev/urandom', `of=${big}`, 'bs=1M', `count=${BIG_MIB}`, 'status=none']);
  const ddOut = path.join(work, 'dd.bin');
  const fresh = () => {
    fs.rmSync(path.join(contracts, 'BIG'), { recursive: true, force: true });
    fs.rmSync(ddOut, { force: true });
    fs.rmSync(path.join(rsyncDest, 'big.bin'), { force: true });
  };
  measure(`one ${BIG_MIB} MiB file`, fresh, {
    ack: () => ack(big, '--path', 'BIG/big.bin'),
    'dd conv=fsync': () =>
      run('dd', ['if=/dev/zero', `of=${ddOut}`, 'bs=1M', `count=${BIG_MIB}`, 'conv=fsync', 'status=none']),
    'rsync -W': () => run('rsync', ['-W', big, `${rsyncd.target}big.bin`]),
    'rsync -W --fsync': () => run('rsync', ['-W', '--fsync', big, `${rsyncd.target}big.bin`]),
    // The same durability and a cryptographic whole-file check on both sides, as ack's SHA-256:
    // rsync's default check (xxh128) is not one (docs/benchmarks.md "Releases").
    'rsync -W --fsync --checksum-choice=sha1': () =>
      run('rsync', ['-W', '--fsync', '--checksum-choice=sha1', big, `${rsyncd.target}big.bin`]),
  });
}

const cpu = (v) => (Number.isNaN(v.cpu) ? '' : `, CPU ${v.cpu.toFixed(2)} s`);
const lines = rows.map((r) => {
  const { label, ack: a, ...peers } = r;
  const cells = Object.entries(peers).map(
    ([k, v]) => `${k} ${v.time.toFixed(2)} s${cpu(v)} (ack ${(v.time / a.time).toFixed(2)}x)`,
  );
  return `| ${label} | ${a.time.toFixed(2)} s${cpu(a)} | ${cells.join('; ')} |`;
});
console.log(
  `\nack for Node ${process.version}, ${rsyncVersion}, ${ROUNDS} rounds; CPU: client and server together` +
    `\n\n| case | ack | peers: their time (ack's speed beside theirs: their time over ack's) |\n|---|---|---|\n${lines.join('\n')}`,
);
// A host without `Server-Timing` (an older one) gives no figure: its rows are left out.
const timed = hostRows.map(([label, xs]) => [label, xs.filter(Number.isFinite)]).filter(([, xs]) => xs.length > 0);
if (timed.length > 0)
  console.log(
    `\nOn the host (its answers' Server-Timing), milliseconds:\n\n| case | median | least | most | samples |\n|---|---|---|---|---|\n${timed
      .map(
        ([label, xs]) =>
          `| ${label} | ${median(xs).toFixed(1)} | ${Math.min(...xs).toFixed(1)} | ${Math.max(...xs).toFixed(1)} | ${xs.length} |`,
      )
      .join('\n')}`,
  );
fs.rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
