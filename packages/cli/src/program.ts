import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { EXIT } from './exit-codes.js';
import { printJsonFailure } from './commands/remote/options.js';
import { endQuietlyOnClosedOutput } from './commands/closed-output.js';

export { EXIT };

/** The version of this package (released together with @ack/host, under the same number). */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

type Register = (program: Command) => void;

/**
 * Every command, in the order `ack --help` lists them, each loaded only when needed: `ack serve`
 * brings the host and its modules, `ack sync upload` only the sync client, `ack --version` nothing
 * (docs/architecture.md "The ack command").
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  serve: async () => (await import('./commands/serve.js')).registerServe,
  init: async () => (await import('./commands/init.js')).registerInit,
  check: async () => (await import('./commands/check.js')).registerCheck,
  catalog: async () => (await import('./commands/catalog.js')).registerCatalog,
  sync: async () => (await import('./commands/sync.js')).registerSync,
  'contract-sync': async () => (await import('./commands/contract-sync.js')).registerContractSync,
  manifest: async () => (await import('./commands/manifest.js')).registerManifest,
  'dev-cert': async () => (await import('./commands/dev-cert.js')).registerDevCert,
  reload: async () => (await import('./commands/reload.js')).registerReload,
};

/** The commands `argv` needs: the one it names, none for `--version`, else all (help, typos). */
function commandsFor(argv: readonly string[]): string[] {
  const args = argv.slice(2);
  const named = args.find((a) => !a.startsWith('-'));
  if (named !== undefined && Object.hasOwn(COMMANDS, named)) return [named];
  if (named === undefined && args.length > 0 && args.every((a) => a === '--version' || a === '-V')) return [];
  return Object.keys(COMMANDS);
}

export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command('ack')
    .description('ack for Node: a web host for business screens, and the tools that feed it')
    .version(VERSION)
    .exitOverride()
    // A usage error is one line on stderr, `ack: ...`, like every other error (not the whole help).
    .configureOutput({
      outputError: (text, write) => write(`ack: ${text.replace(/^error: /, '').trimEnd()} (see --help)\n`),
    });
  for (const name of commandsFor(argv)) (await COMMANDS[name]!())(program);
  return program;
}

/** The empty shape of a command's `--json` document, for failures before the command ran. */
async function jsonBase(argv: string[]): Promise<Record<string, unknown>> {
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
      return { ...(await import('./commands/dev-cert.js')).DEV_CERT_JSON_BASE };
    default:
      return { results: [] };
  }
}

export async function runCli(argv: string[]): Promise<void> {
  endQuietlyOnClosedOutput();
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const json = argv.includes('--json');
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) process.exit(0);
      // The usage error is already on stderr; with --json it is also the one document on stdout.
      if (json) printJsonFailure(await jsonBase(argv), err.message.replace(/^error: /, ''), EXIT.usage);
      process.exit(EXIT.usage);
    }
    process.stderr.write(`ack: ${(err as Error).message}\n`);
    if (json) printJsonFailure(await jsonBase(argv), (err as Error).message, EXIT.failed);
    process.exit(EXIT.failed);
  }
}
