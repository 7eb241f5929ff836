// Our host for the benchmark: the built host and wwwroot module (packages/*/dist), over a bench
// home, on a loopback port. Prints one JSON line `{"url": ...}` when listening.
import { createHost } from '../../packages/host/dist/index.js';
import { wwwrootModule } from '../../packages/wwwroot/dist/index.js';

const appDir = process.argv[2];
const host = await createHost({ appDir, modules: { wwwroot: wwwrootModule }, logging: { quiet: true } });
const url = await host.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(JSON.stringify({ url, pid: process.pid }) + '\n');
const stop = () => host.close({ graceMs: 500 }).then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
