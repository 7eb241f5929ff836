// The Node ceiling: plain node:http answering the benchmark's files from memory, with the same
// validators a static server sends (ETag, Last-Modified, 304 on If-None-Match/If-Modified-Since)
// and a precompressed sidecar when the client accepts it. Nothing a real server could skip is
// skipped, nothing else is done: no server serving files from Node can be faster.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { listen } from './listen.mjs';

const layout = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const types = {
  '.txt': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.bin': 'application/octet-stream',
  '.json': 'application/json; charset=utf-8',
};

function entry(file, extra = {}) {
  const body = fs.readFileSync(file);
  const st = fs.statSync(file);
  const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs * 1000).toString(16)}"`;
  const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString();
  const type = types[path.extname(file.replace(/\.(br|gz)$/, ''))] ?? 'application/octet-stream';
  return {
    body,
    etag,
    lastModified,
    headers: {
      'Content-Type': type,
      ETag: etag,
      'Last-Modified': lastModified,
      'Cache-Control': 'no-cache',
      'Content-Length': body.length,
      ...extra,
    },
  };
}

const files = new Map();
const walk = (dir, prefix) => {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) walk(p, `${prefix}/${d.name}`);
    else files.set(`${prefix}/${d.name}`, entry(p));
  }
};
walk(layout.www, '');
for (const url of layout.screen) {
  const file = path.join(layout.www, url);
  files.set(url, {
    ...entry(file, { Vary: 'Accept-Encoding' }),
    br: entry(`${file}.br`, { Vary: 'Accept-Encoding', 'Content-Encoding': 'br' }),
    gz: entry(`${file}.gz`, { Vary: 'Accept-Encoding', 'Content-Encoding': 'gzip' }),
  });
}
files.set('/shared/theme.css', entry(layout.sharedFile));
files.set('/shared-files/manifest', {
  ...entry(layout.manifestFile),
  etag: '"m"',
  headers: {
    'Content-Type': 'application/json; charset=utf-8',
    ETag: '"m"',
    'Cache-Control': 'no-cache',
    'Content-Length': Buffer.byteLength(layout.manifestJson),
  },
});
const notFound = Buffer.from('Not Found');

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  let f = files.get(q === -1 ? req.url : req.url.slice(0, q));
  if (!f) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': notFound.length });
    return res.end(notFound);
  }
  const ae = req.headers['accept-encoding'];
  if (f.br && ae !== undefined) f = ae.includes('br') ? f.br : ae.includes('gzip') ? f.gz : f;
  const inm = req.headers['if-none-match'];
  const ims = req.headers['if-modified-since'];
  if (inm !== undefined ? inm === f.etag : ims !== undefined && Date.parse(f.lastModified) <= Date.parse(ims)) {
    res.writeHead(304, { ETag: f.etag, 'Last-Modified': f.lastModified, 'Cache-Control': 'no-cache' });
    return res.end();
  }
  res.writeHead(200, f.headers);
  res.end(req.method === 'HEAD' ? undefined : f.body);
});
listen(server);
