/** Exit codes (docs/sync.md "The commands"): 0 done, 1 failed (server or network), 2 bad usage or input, 3 refused credentials. */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3 } as const;

/** An error that ends the command with a one-line message and an exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
