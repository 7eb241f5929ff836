import { Command, CommanderError } from 'commander';
import { HOST_VERSION } from '@ack/host';
import { registerServe } from './commands/serve.js';
import { registerInit } from './commands/init.js';
import { registerCatalog } from './commands/catalog.js';
import { registerCheck } from './commands/check.js';
import { registerSync } from './commands/sync.js';
import { registerContractSync } from './commands/contract-sync.js';
import { registerManifest } from './commands/manifest.js';
import { DEV_CERT_JSON_BASE, registerDevCert } from './commands/dev-cert.js';
import { registerReload } from './commands/serve-workers.js';
import { EXIT } from './exit-codes.js';
import { printJsonFailure } from './commands/remote/options.js';
import { endQuietlyOnClosedOutput } from './commands/closed-output.js';

export { EXIT };

export function buildProgram(): Command {
  const program = new Command('ack')
    .description('ack for Node: a web host for business screens, and the tools that feed it')
    .version(HOST_VERSION)
    .exitOverride()
    // A usage error is one line on stderr, `ack: ...`, like every other error (not the whole help).
    .configureOutput({
      outputError: (text, write) => write(`ack: ${text.replace(/^error: /, '').trimEnd()} (see --help)\n`),
    });
  registerServe(program);
  registerInit(program);
  registerCheck(program);
  registerCatalog(program);
  registerSync(program);
  registerContractSync(program);
  registerManifest(program);
  registerDevCert(program);
  registerReload(program);
  return program;
}

/** The empty shape of a command's `--json` document, for failures before the command ran. */
function jsonBase(argv: string[]): Record<string, unknown> {
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  const name = words[0] === 'sync' || words[0] === 'catalog' ? `${words[0]} ${words[1] ?? ''}` : (words[0] ?? '');
  switch (name) {
    case 'check':
      return { settingsFile: null, errors: [], warnings: [] };
    case 'catalog check':
      return { catalog: null, items: 0, skipped: [], missingTargets: [], sensitiveTargets: [] };
    case 'sync upload':
      return { module: null, change: null, dryRun: argv.includes('--dry-run'), results: [] };
    case 'sync watch':
      return { event: 'failed' };
    case 'dev-cert':
      return { ...DEV_CERT_JSON_BASE };
    default:
      return { results: [] };
  }
}

export async function runCli(argv: string[]): Promise<void> {
  endQuietlyOnClosedOutput();
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const json = argv.includes('--json');
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) process.exit(0);
      // The usage error is already on stderr; with --json it is also the one document on stdout.
      if (json) printJsonFailure(jsonBase(argv), err.message.replace(/^error: /, ''), EXIT.usage);
      process.exit(EXIT.usage);
    }
    process.stderr.write(`ack: ${(err as Error).message}\n`);
    if (json) printJsonFailure(jsonBase(argv), (err as Error).message, EXIT.failed);
    process.exit(EXIT.failed);
  }
}
