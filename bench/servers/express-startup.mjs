// The start-up peer: a bare Express 5 static server (express.static over the bench's static root)
// on the port given, as small as an Express app serving files can be. `node express-startup.mjs LAYOUT PORT`
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const express = createRequire(path.join(here, '../../packages/host/package.json'))('express');
const layout = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const app = express();
app.use(express.static(layout.www));
app.listen(Number(process.argv[3]), '127.0.0.1');
