import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost } from '@ack/host';
import { wwwrootModule } from '@ack/wwwroot';
import { greeterModule } from './greeter.js';

// The application home sits next to this project's sources: app/appsettings.json names the modules
// to load (wwwroot and greeter) and modules/<id>/module.json configures each of them.
const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../app');

const host = await createHost({
  appDir,
  modules: { wwwroot: wwwrootModule, greeter: greeterModule },
});
const url = await host.listen({ port: Number(process.env['PORT'] ?? 8422), host: '127.0.0.1' });
host.logger.info(`listening on ${url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void host.close({ graceMs: 5_000 }).then(() => process.exit(0));
  });
}
