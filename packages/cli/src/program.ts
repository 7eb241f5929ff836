import { Command, CommanderError } from 'commander';
import { HOST_VERSION } from '@ack/host';
import { registerServe } from './commands/serve.js';
import { registerInit } from './commands/init.js';
import { registerCatalog } from './commands/catalog.js';
import { registerSync } from './commands/sync.js';
import { registerContractSync } from './commands/contract-sync.js';
import { registerManifest } from './commands/manifest.js';
import { registerDevCert } from './commands/dev-cert.js';
import { registerReload } from './commands/serve-workers.js';
import { EXIT } from './exit-codes.js';

export { EXIT };

export function buildProgram(): Command {
  const program = new Command('ack')
    .description('ack for Node: a web host for business screens, and the tools that feed it')
    .version(HOST_VERSION)
    .exitOverride()
    // A usage error is one line on stderr, `ack: ...`, like every other error (not the whole help).
    .configureOutput({ outputError: (text, write) => write(`ack: ${text.replace(/^error: /, '').trimEnd()} (see --help)\n`) });
  registerServe(program);
  registerInit(program);
  registerCatalog(program);
  registerSync(program);
  registerContractSync(program);
  registerManifest(program);
  registerDevCert(program);
  registerReload(program);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exit(err.exitCode === 0 ? 0 : EXIT.usage);
    }
    process.stderr.write(`ack: ${(err as Error).message}\n`);
    process.exit(EXIT.failed);
  }
}
