// The Node ceiling: plain node:http answering the benchmark's files from memory, with the same
// validators a static server sends (ETag, Last-Modified, 304 on If-None-Match/If-Modified-Since,
// carrying what RFC 9110 15.4.5 lists)
// and a precompressed sidecar when the client accepts it. Nothing a real server could skip is
// skipped, nothing else is done: no server serving files from Node can be faster.
//
// With `--edge-headers` (the `ceiling-h` column) it also sends the headers our host adds to every
// answer with the benchmark's settings (security headers, CORS's `Vary: Origin`, Accept-Ranges on
// files), in one flat list: what those headers cost Node itself, apart from anything the host does.
// bench/run.mjs checks before measuring that the two send the same header names.
//
// With `--tls CERT KEY` it is the bare Node HTTPS server of the HTTPS suite (bench/suites/https.mjs).
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { listen } from './listen.mjs';

const layout = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const EDGE = process.argv.includes('--edge-headers')
  ? {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'cross-origin',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'SAMEORIGIN',
      Vary: 'Origin',
    }
  : undefined;
/**
 * Node's flat `[name, value, ...]` head, the edge's headers first (`Vary` lists merged); a 304's
 * (`notModified`) gets only the edge's `Vary`, as our host sends it (RFC 9110 15.4.5).
 */
const flat = (headers, file, notModified = false) => {
  if (!EDGE) return headers;
  const edge = notModified ? { Vary: EDGE.Vary } : EDGE;
  const all = { ...edge, ...(file ? { 'Accept-Ranges': 'bytes' } : {}), ...headers };
  if (headers.Vary) all.Vary = `${EDGE.Vary}, ${headers.Vary}`;
  return Object.entries(all).flatMap(([k, v]) => [k, String(v)]);
};
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
  const vary = extra.Vary ? { Vary: extra.Vary } : {};
  return {
    body,
    etag,
    lastModified,
    headers: flat(
      {
        'Content-Type': type,
        ETag: etag,
        'Last-Modified': lastModified,
        'Cache-Control': 'no-cache',
        'Content-Length': body.length,
        ...extra,
      },
      true,
    ),
    // What RFC 9110 15.4.5 lists for a 304 (a cache keeps the rest of its stored 200).
    notModified: flat({ ETag: etag, 'Cache-Control': 'no-cache', ...vary }, false, true),
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
  headers: flat({
    'Content-Type': 'application/json; charset=utf-8',
    ETag: '"m"',
    'Cache-Control': 'no-cache',
    'Content-Length': Buffer.byteLength(layout.manifestJson),
  }),
  notModified: flat({ ETag: '"m"', 'Cache-Control': 'no-cache' }, false, true),
});
const notFound = Buffer.from('Not Found');
const notFoundHead = flat({ 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': notFound.length });

const tlsAt = process.argv.indexOf('--tls');
const tls =
  tlsAt === -1
    ? undefined
    : { cert: fs.readFileSync(process.argv[tlsAt + 1]), key: fs.readFileSync(process.argv[tlsAt + 2]) };
const handler = (req, res) => {
  const q = req.url.indexOf('?');
  let f = files.get(q === -1 ? req.url : req.url.slice(0, q));
  if (!f) {
    res.writeHead(404, notFoundHead);
    return res.end(notFound);
  }
  const ae = req.headers['accept-encoding'];
  if (f.br && ae !== undefined) f = ae.includes('br') ? f.br : ae.includes('gzip') ? f.gz : f;
  const inm = req.headers['if-none-match'];
  const ims = req.headers['if-modified-since'];
  if (inm !== undefined ? inm === f.etag : ims !== undefined && Date.parse(f.lastModified) <= Date.parse(ims)) {
    res.writeHead(304, f.notModified);
    return res.end();
  }
  res.writeHead(200, f.headers);
  res.end(req.method === 'HEAD' ? undefined : f.body);
};
const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
listen(server, tls ? 'https' : 'http');
