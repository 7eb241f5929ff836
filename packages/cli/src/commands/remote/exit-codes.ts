import { EXIT } from '../../exit-codes.js';

/** The CLI's exit codes (`EXIT`, docs/sync.md "The commands"), under the name these modules use. */
export const EXIT_CODES = EXIT;

/** An error that ends the command with a one-line message and an exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
