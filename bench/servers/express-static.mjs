// The Express peer: plain Express 5 + express.static over the same static root (with the
// `compression` middleware, what an Express app adds for compressed assets), the shared file by
// res.sendFile and the manifest as a fixed JSON array (what an Express app would write by hand).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listen } from './listen.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../packages/host/package.json'));
const express = require('express');
const compression = require('compression');

const layout = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const app = express();
app.disable('x-powered-by');
app.get('/shared-files/manifest', (_req, res) => {
  res.set('Cache-Control', 'no-cache').type('application/json').send(layout.manifestJson);
});
app.get('/shared/theme.css', (_req, res) => res.sendFile(layout.sharedFile, { dotfiles: 'allow' }));
app.use('/screen', compression(), express.static(path.join(layout.www, 'screen')));
app.use(express.static(layout.www));
listen(app.listen(0, '127.0.0.1'));
