// Starts every server of the benchmark on CPU 0 (see cpu.mjs): our host, the Node ceiling, the
// Node peers, and nginx with one worker from a generated config in a temporary folder.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { pinned } from './cpu.mjs';

export function startNode(name, script, args, nodeFlags = []) {
  const [cmd, ...rest] = pinned(0, [process.execPath, ...nodeFlags, script, ...args]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    const lines = readline.createInterface({ input: child.stdout });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening`)));
    lines.once('line', (line) => {
      const info = JSON.parse(line);
      // taskset execs node, so the child's pid is the server's.
      resolve({ name, url: info.url, info, pid: child.pid, child, stop: () => stopChild(child) });
    });
  });
}

/**
 * Our host as `ack serve --workers 2` (the built CLI, docs/scale-out.md), pinned like every server:
 * the primary and both workers share CPU 0. Ready once both workers listen (the primary says so
 * on stderr).
 */
export async function startAckWorkers(name, layoutFile, repo) {
  const appDir = JSON.parse(fs.readFileSync(layoutFile, 'utf8')).app;
  const port = await freePort();
  const bin = path.join(repo, 'packages/cli/dist/bin.js');
  const [cmd, ...rest] = pinned(0, [
    process.execPath,
    bin,
    'serve',
    '--app-dir',
    appDir,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--workers',
    '2',
  ]);
  const child = spawn(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening: ${stderr}`)));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if ((stderr.match(/worker \d+ listening/g) ?? []).length >= 2) resolve();
    });
  });
  return { name, url: `http://127.0.0.1:${port}`, pid: child.pid, child, stop: () => stopChild(child) };
}

export function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export function nginxBinary() {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(p)) return p;
  return undefined;
}

export function nginxVersion(bin) {
  // `nginx -v` prints "nginx version: nginx/1.22.1" on stderr.
  const out = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  return `${out.stderr ?? ''}${out.stdout ?? ''}`.trim().replace(/^nginx version:\s*/, '') || undefined;
}

/** nginx, one worker, not a daemon; `gzip_static` serves the screen's `.gz` sidecars. */
export function nginxConfig(dir, port, files) {
  return `worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 120s;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port};
    root ${files.www};
    location /screen/ { gzip_static on; }
    location = /shared/theme.css { alias ${files.sharedFile}; }
    location = /shared-files/manifest { default_type application/json; add_header Cache-Control no-cache; alias ${files.manifestFile}; }
  }
}
`;
}

export async function startNginx(bin, work, files) {
  const dir = fs.mkdtempSync(path.join(work, 'nginx-'));
  const port = await freePort();
  const confFile = path.join(dir, 'nginx.conf');
  fs.writeFileSync(confFile, nginxConfig(dir, port, files));
  const [cmd, ...rest] = pinned(0, [bin, '-c', confFile, '-p', dir, '-e', path.join(dir, 'error.log')]);
  const child = spawn(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${url}/1k.txt`);
      return { name: 'nginx', url, pid: child.pid, stop: () => stopChild(child) };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`nginx did not start: ${stderr}`);
}
