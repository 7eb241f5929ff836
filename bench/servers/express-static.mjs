// The Express peer: plain Express 5 + express.static over the same static root, the shared file by
// res.sendFile and the manifest as a fixed JSON array (what an Express app would write by hand).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../packages/host/package.json'));
const express = require('express');

const [www, sharedFile, manifestJson] = process.argv.slice(2);
const app = express();
app.disable('x-powered-by');
app.get('/shared-files/manifest', (_req, res) => {
  res.set('Cache-Control', 'no-cache').type('application/json').send(manifestJson);
});
app.get('/shared/theme.css', (_req, res) => res.sendFile(sharedFile, { dotfiles: 'allow' }));
app.use(express.static(www));
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
