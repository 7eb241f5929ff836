// The TLS peers that are not Node: nginx (one worker, `ssl` + `http2`) and Caddy (`file_server`,
// HTTP/2 by default), both on CPU 0 with the bench certificate, serving the same files.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { pinned } from './cpu.mjs';
import { freePort, stopChild } from './servers.mjs';

export function caddyVersion() {
  const r = spawnSync('caddy', ['version'], { encoding: 'utf8' });
  return r.error ? undefined : r.stdout.trim().split(' ')[0];
}

/** Resolves once a GET of `url` answers (any status), or rejects with the server's stderr. */
async function ready(name, child, url, stderr) {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr()}`);
    const ok = await new Promise((resolve) => {
      https
        .get(url, { rejectUnauthorized: false, agent: false }, (res) => {
          res.resume();
          resolve(true);
        })
        .once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not start: ${stderr()}`);
}

function started(name, argv, env, url) {
  const [cmd, ...rest] = pinned(0, argv);
  const child = spawn(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  return ready(name, child, `${url}/1k.txt`, () => err).then(() => ({
    name,
    url,
    pid: child.pid,
    stop: () => stopChild(child),
  }));
}

export async function startNginxTls(bin, work, files, { cert, key }) {
  const dir = fs.mkdtempSync(path.join(work, 'nginx-tls-'));
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  error_log ${dir}/error.log error;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include /etc/nginx/mime.types;
  sendfile on;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port} ssl http2;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    root ${files.www};
    add_header Cache-Control no-cache;
    location = /shared/theme.css { alias ${files.sharedFile}; }
  }
}
`,
  );
  return started(
    'nginx',
    [bin, '-c', conf, '-p', dir, '-e', path.join(dir, 'error.log')],
    {},
    `https://127.0.0.1:${port}`,
  );
}

export async function startCaddy(work, files, { cert, key }) {
  const dir = fs.mkdtempSync(path.join(work, 'caddy-'));
  const port = await freePort();
  const conf = path.join(dir, 'Caddyfile');
  fs.writeFileSync(
    conf,
    `{
  admin off
  auto_https disable_redirects
  storage file_system ${dir}/data
}
https://127.0.0.1:${port} {
  tls ${cert} ${key}
  handle /shared/theme.css {
    root * ${files.sharedDir}
    rewrite * /theme.css
    file_server
  }
  handle {
    root * ${files.www}
    file_server
  }
}
`,
  );
  // One OS thread for Go code, as nginx has one worker and Node one main thread.
  return started(
    'caddy',
    ['caddy', 'run', '--config', conf, '--adapter', 'caddyfile'],
    { GOMAXPROCS: '1', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    `https://127.0.0.1:${port}`,
  );
}
