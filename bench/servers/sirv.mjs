// The sirv peer: sirv over the same static root (precompressed sidecars on, as sirv offers), the
// shared file by a second sirv on its folder, the manifest as a fixed JSON array.
import fs from 'node:fs';
import http from 'node:http';
import sirv from 'sirv';
import { listen } from './listen.mjs';

const layout = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const www = sirv(layout.www, { etag: true, brotli: true, gzip: true });
const shared = sirv(layout.sharedDir, { etag: true });
const manifest = Buffer.from(layout.manifestJson);
const server = http.createServer((req, res) => {
  const notFound = () => {
    res.statusCode = 404;
    res.end('Not Found');
  };
  if (req.url === '/shared-files/manifest') {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache',
      'Content-Length': manifest.length,
    });
    return res.end(manifest);
  }
  if (req.url === '/shared/theme.css') {
    req.url = '/theme.css';
    return shared(req, res, notFound);
  }
  www(req, res, notFound);
});
listen(server);
