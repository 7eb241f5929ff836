// Bytes on the wire for the example screen (examples/basic: SYS010 with its style sheet, script,
// the screen loader and the shared files it loads), fetched as a browser would
// (`Accept-Encoding: gzip, deflate, br`): our host with UseResponseComression on, beside nginx
// with `gzip_static on` (`.gz` files written beside each asset with gzip -9, as a build step would)
// and both with no compression. Counts every byte of each response (status line, headers, body)
// on a raw socket. Prints a table and updates the "Bytes on the wire" section of docs/benchmarks.md.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { nginxBinary } from './lib/servers.mjs';
import { replaceWireSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const work = path.join(here, '.work', 'wire');
const ASSETS = [
  '/view/SYS/SYS010.html',
  '/lib/ack.loader.js',
  '/view/SYS/SYS010.css',
  '/view/SYS/SYS010.js',
  '/shared-files/manifest',
  '/shared/theme.css',
  '/shared/app-init.js',
];

function wireBytes(url, target) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.end(
        `GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept-Encoding: gzip, deflate, br\r\nConnection: close\r\n\r\n`,
      );
    });
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    socket.once('error', reject);
    socket.once('close', () => {
      const all = Buffer.concat(chunks);
      const head = all.subarray(0, all.indexOf('\r\n\r\n')).toString();
      resolve({
        bytes: all.length,
        status: Number(head.split(' ')[1]),
        encoding: /content-encoding:\s*(\S+)/i.exec(head)?.[1] ?? 'identity',
      });
    });
  });
}

async function startAck(compress) {
  const home = path.join(work, compress ? 'ack-compressed' : 'ack-plain');
  fs.cpSync(path.join(repo, 'examples/basic'), home, { recursive: true });
  const file = path.join(home, 'app/appsettings.json');
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  settings.AppSettings.LoadModules = ['wwwroot'];
  settings.AppSettings.UseResponseComression = compress;
  settings.Serilog.WriteTo = [];
  fs.writeFileSync(file, JSON.stringify(settings));
  fs.writeFileSync(path.join(work, `${compress}.json`), JSON.stringify({ app: path.join(home, 'app') }));
  const child = spawn(process.execPath, [path.join(here, 'servers/ack.mjs'), path.join(work, `${compress}.json`)], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const url = await new Promise((resolve) =>
    child.stdout.once('data', (d) => resolve(JSON.parse(String(d).split('\n')[0]).url)),
  );
  return { url, stop: () => child.kill('SIGTERM') };
}

async function startNginx(gzipStatic) {
  const bin = nginxBinary();
  if (!bin) return undefined;
  const home = path.join(work, gzipStatic ? 'nginx-gzip-static' : 'nginx-plain');
  fs.cpSync(path.join(repo, 'examples/basic'), home, { recursive: true });
  const www = path.join(home, 'modules/wwwroot/wwwroot');
  const files = [
    path.join(home, 'contracts/wwwroot/HDS/SYS/SYS010.html'),
    path.join(home, 'contracts/wwwroot/HDS/SYS/SYS010.css'),
    path.join(home, 'contracts/wwwroot/HDS/SYS/SYS010.js'),
    path.join(www, 'lib/ack.loader.js'),
    path.join(home, 'shared/theme.css'),
    path.join(home, 'shared/app-init.js'),
  ];
  const manifest = path.join(home, 'manifest.json');
  const items = JSON.parse(fs.readFileSync(path.join(home, 'config/shared_files.json'), 'utf8')).items;
  fs.writeFileSync(manifest, JSON.stringify(items.map((i) => ({ requestPath: i.requestPath }))));
  if (gzipStatic)
    for (const f of [...files, manifest]) fs.writeFileSync(`${f}.gz`, zlib.gzipSync(fs.readFileSync(f), { level: 9 }));
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const conf = `worker_processes 1; daemon off; pid ${home}/nginx.pid; error_log ${home}/error.log warn;
events {}
http { include /etc/nginx/mime.types; access_log off; gzip_static ${gzipStatic ? 'on' : 'off'};
  client_body_temp_path ${home}/cb; proxy_temp_path ${home}/p; fastcgi_temp_path ${home}/f; uwsgi_temp_path ${home}/u; scgi_temp_path ${home}/s;
  server { listen 127.0.0.1:${port}; root ${www};
    location /view/ { alias ${home}/contracts/wwwroot/HDS/; }
    location = /shared/theme.css { alias ${home}/shared/theme.css; }
    location = /shared/app-init.js { alias ${home}/shared/app-init.js; }
    location = /shared-files/manifest { default_type application/json; alias ${manifest}; }
  } }`;
  fs.writeFileSync(path.join(home, 'nginx.conf'), conf);
  const child = spawn(bin, ['-c', path.join(home, 'nginx.conf'), '-p', home, '-e', path.join(home, 'error.log')], {
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${url}/lib/ack.loader.js`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url, stop: () => child.kill('SIGTERM') };
}

async function main() {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  const servers = [
    ['ack, UseResponseComression on', await startAck(true)],
    ['ack, compression off', await startAck(false)],
    ['nginx, gzip_static on', await startNginx(true)],
    ['nginx, no compression', await startNginx(false)],
  ].filter(([, s]) => s);
  try {
    const columns = [];
    for (const [name, server] of servers) {
      const cells = [];
      for (const asset of ASSETS) cells.push(await wireBytes(server.url, asset));
      columns.push({ name, cells });
    }
    const lines = [
      `| asset | ${columns.map((c) => c.name).join(' | ')} |`,
      `|---|${columns.map(() => '---').join('|')}|`,
    ];
    ASSETS.forEach((asset, i) =>
      lines.push(
        `| \`${asset}\` | ${columns.map((c) => `${c.cells[i].bytes.toLocaleString('en-US')} (${c.cells[i].encoding}${c.cells[i].status === 200 ? '' : `, ${c.cells[i].status}`})`).join(' | ')} |`,
      ),
    );
    lines.push(
      `| **total** | ${columns.map((c) => `**${c.cells.reduce((n, x) => n + x.bytes, 0).toLocaleString('en-US')}**`).join(' | ')} |`,
    );
    const table = lines.join('\n');
    console.log(table);
    const section = `\`pnpm bench:wire\` (${new Date().toISOString().slice(0, 10)}): every byte of each response (status line, headers and
body) of the example screen's requests, fetched with \`Accept-Encoding: gzip, deflate, br\` on a raw
socket. Our host sends more header bytes per response than nginx (security headers, CORS \`Vary\`,
cache policy); its bodies are brotli (compressed once per file version, quality 6), nginx's are its
\`.gz\` files (gzip -9).

${table}`;
    if (!process.env.BENCH_NO_DOCS) replaceWireSection(path.join(repo, 'docs/benchmarks.md'), section);
  } finally {
    for (const [, s] of servers) s.stop();
  }
}

main().catch((err) => {
  console.error(`wire-bytes failed: ${err.stack ?? err}`);
  process.exitCode = 1;
});
