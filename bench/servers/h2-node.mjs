// The bare Node HTTP/2 peers of the HTTP/2 suite, over TLS with the bench certificate, answering
// the benchmark's files from memory with ETag and 304 (nothing a real server could skip):
//   h2-node.mjs LAYOUT CERT KEY stream   the stream API (`stream.respond` + `end`)
//   h2-node.mjs LAYOUT CERT KEY compat   the compatibility API (`res.writeHead` + `end`)
import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import { memoryFiles } from './memory-files.mjs';

const [layoutFile, certFile, keyFile, api] = process.argv.slice(2);
const files = memoryFiles(JSON.parse(fs.readFileSync(layoutFile, 'utf8')));
const notFound = Buffer.from('Not Found');
// Node holds a session's unsent bytes in memory up to `maxSessionMemory` (10 MB by default) and resets
// streams past it: 16 streams of the 4 MiB file from memory need more, as any server sending large
// bodies from memory would set.
const options = {
  cert: fs.readFileSync(certFile),
  key: fs.readFileSync(keyFile),
  allowHTTP1: true,
  maxSessionMemory: 128,
};

/** The status, head and body for a request path and its If-None-Match. */
function answer(url, inm) {
  const q = url.indexOf('?');
  const f = files.get(q === -1 ? url : url.slice(0, q));
  if (!f) return [404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': notFound.length }, notFound];
  // A 304 carries what RFC 9110 15.4.5 lists, as our host's does.
  if (inm === f.etag) return [304, { etag: f.etag, 'cache-control': 'no-cache' }];
  return [200, f.head, f.body];
}

let server;
if (api === 'stream') {
  server = http2.createSecureServer(options);
  server.on('stream', (stream, headers) => {
    const [status, head, body] = answer(headers[':path'], headers['if-none-match']);
    stream.respond({ ':status': status, ...head });
    stream.end(body);
  });
} else if (api === 'compat') {
  server = http2.createSecureServer(options, (req, res) => {
    const [status, head, body] = answer(req.url, req.headers['if-none-match']);
    res.writeHead(status, head);
    res.end(body);
  });
} else throw new Error(`${path.basename(process.argv[1])}: the last argument is stream or compat`);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ url: `https://127.0.0.1:${port}`, pid: process.pid }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
