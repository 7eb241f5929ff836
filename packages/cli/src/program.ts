import { Command, CommanderError } from 'commander';
import { HOST_VERSION } from '@ack/host';
import { registerServe } from './commands/serve.js';

/** Exit codes (DESIGN §5 CLI): 0 done, 1 failed (server or network), 2 bad usage or input, 3 refused credentials. */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3 } as const;

export function buildProgram(): Command {
  const program = new Command('ack')
    .description('ack for Node: a web host for business screens, and the tools that feed it')
    .version(HOST_VERSION)
    .exitOverride()
    .showHelpAfterError();
  registerServe(program);
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
