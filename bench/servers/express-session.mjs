// The signed-in peer: Express 5 + express-session with the same store our host uses, answering the
// same two requests as our host's wwwroot module: a sign-in that regenerates the session and keeps
// the member in it, and `GET /wwwroot/api/index/guid` for a signed-in member (a fresh UUID as JSON).
//   express-session.mjs redis   connect-redis over node-redis (Redis on 127.0.0.1:6379)
//   express-session.mjs mysql   our host's own MySQL store (knex + mysql2; MariaDB on 127.0.0.1:3306)
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listen } from './listen.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fromHost = createRequire(path.join(here, '../../packages/host/package.json'));
const fromCli = createRequire(path.join(here, '../../packages/cli/package.json'));
const express = fromHost('express');
const session = fromHost('express-session');
const IDLE_MS = 20 * 60_000;
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

let store;
if (process.argv[2] === 'redis') {
  const { RedisStore } = await import('connect-redis');
  const client = fromCli('redis').createClient({ url: 'redis://127.0.0.1:6379' });
  await client.connect();
  store = new RedisStore({ client, prefix: 'bench-express:session:', ttl: IDLE_MS / 1000 });
} else if (process.argv[2] === 'mysql') {
  const { SqlSessionStore } = await import('../../packages/host/dist/session/sql-store.js');
  store = new SqlSessionStore(
    'MySql',
    '127.0.0.1:3306',
    'mysql2',
    { host: '127.0.0.1', port: 3306, user: 'root', password: '', database: 'test' },
    'bench_express',
    'SessionData',
    IDLE_MS,
    quiet,
  );
  await store.waitUntilReady(10_000);
} else throw new Error('express-session.mjs: redis or mysql');

const app = express();
app.disable('x-powered-by');
// The options our host gives express-session (docs/sessions.md).
app.use(
  session({
    name: 'ack.Session',
    secret: 'bench-secret',
    store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: '/' },
  }),
);
app.post('/wwwroot/api/dev-account/sign-in', express.json({ limit: '16kb' }), (req, res, next) => {
  req.session.regenerate((err) => {
    if (err) return next(err);
    req.session.member = req.body;
    res.set('Cache-Control', 'no-store').json(req.body);
  });
});
app.get('/wwwroot/api/index/guid', (req, res) => {
  if (!req.session.member) return res.status(401).json({ status: 401 });
  res.json(crypto.randomUUID());
});
listen(app.listen(0, '127.0.0.1'));
