// Our host for the benchmark: the built host and wwwroot module (packages/*/dist), over a bench
// home, on a loopback port. Prints one JSON line `{"url": ..., "endpoints": [...]}` when listening
// (the endpoints: its `Kestrel:Endpoints` listeners). A second argument names another app folder
// of the same home (the TLS suites' settings).
import fs from 'node:fs';
import { createHost } from '../../packages/host/dist/index.js';
import { wwwrootModule } from '../../packages/wwwroot/dist/index.js';

const appDir = process.argv[3] ?? JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).app;
const host = await createHost({ appDir, modules: { wwwroot: wwwrootModule }, logging: { quiet: true } });
const url = await host.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(JSON.stringify({ url, pid: process.pid, endpoints: host.endpoints }) + '\n');
// The bench asks for memory figures over IPC: first as they are, then after a full collection
// (when started with --expose-gc), which tells garbage not yet collected from memory kept.
process.on('message', (message) => {
  if (message !== 'memory') return;
  const before = process.memoryUsage();
  globalThis.gc?.();
  const after = process.memoryUsage();
  process.send?.({ before, after });
});
const stop = () => host.close({ graceMs: 500 }).then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
