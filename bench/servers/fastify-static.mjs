// The Fastify peer: fastify + @fastify/static over the same static root (precompressed sidecars on),
// the shared file by reply.sendFile from its folder, the manifest as a fixed JSON array.
import fs from 'node:fs';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';

const layout = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const app = Fastify({ logger: false });
await app.register(fastifyStatic, { root: layout.www, preCompressed: true });
app.get('/shared/theme.css', (_req, reply) => reply.sendFile('theme.css', layout.sharedDir));
app.get('/shared-files/manifest', (_req, reply) =>
  reply.header('Cache-Control', 'no-cache').type('application/json').send(layout.manifestJson),
);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(JSON.stringify({ url, pid: process.pid }) + '\n');
process.on('SIGTERM', () => process.exit(0));
