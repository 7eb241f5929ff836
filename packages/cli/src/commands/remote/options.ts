import { Command, InvalidArgumentError } from 'commander';
import { CliError, EXIT } from '../../exit-codes.js';
import { DEFAULT_RETRY } from './retry.js';
import type { RequestSettings } from './http.js';

/** Options every command that talks to a host takes. */
export interface RemoteOptions {
  url?: string[];
  json?: boolean;
  retries?: number;
  timeout?: number;
}

export const DEFAULT_URL = 'http://127.0.0.1:8421';

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number, 0 or more');
  return n;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a number above 0');
  return n;
}

/**
 * `verb` is what the command does with each host (`push to`, `ask`); `json` what `--json` prints
 * (`sync watch` prints one line per event, not one document).
 */
export function addRemoteOptions(command: Command, words: { verb?: string; json?: string } = {}): Command {
  return command
    .option(
      '--url <url>',
      `host URL; repeat (or separate with commas) to ${words.verb ?? 'push to'} several hosts (default: ACK_URL, else ${DEFAULT_URL})`,
      collect,
    )
    .option('--json', words.json ?? 'print one JSON document for scripts instead of text')
    .option(
      '--retries <n>',
      `retries on network errors, 429 and 5xx (default ${DEFAULT_RETRY.retries})`,
      nonNegativeInt,
    )
    .option('--timeout <seconds>', 'time-out of each request (default 60)', positiveNumber);
}

/** Host URLs from `--url` (repeatable, comma-separated) or `ACK_URL`. */
export function resolveUrls(options: RemoteOptions, env: NodeJS.ProcessEnv = process.env): string[] {
  const given = options.url?.length ? options.url : env.ACK_URL ? [env.ACK_URL] : [DEFAULT_URL];
  const urls = given.flatMap((u) => u.split(/[,\s]+/)).filter(Boolean);
  for (const u of urls) {
    let parsed: URL;
    // `127.0.0.1:8421` or `localhost:8421` (no scheme) is the usual slip: say what was meant.
    const noScheme = !/^[a-z][a-z0-9+.-]*:\/\//i.test(u);
    const suggestion = noScheme ? ` (did you mean http://${u}?)` : '';
    try {
      parsed = new URL(u);
    } catch {
      throw new CliError(`not a URL: ${u}${suggestion}`, EXIT.usage);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new CliError(`not an http(s) URL: ${u}${suggestion}`, EXIT.usage);
  }
  return [...new Set(urls.map((u) => u.replace(/\/+$/, '')))];
}

export function requestSettings(options: RemoteOptions): RequestSettings {
  return {
    retry: { ...DEFAULT_RETRY, retries: options.retries ?? DEFAULT_RETRY.retries },
    timeoutMs: (options.timeout ?? 60) * 1000,
  };
}

/** A secret from its option or its environment variable; a clear usage error when neither is set. */
export function requireSecret(
  value: string | undefined,
  envName: string,
  option: string,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const secret = (value ?? env[envName] ?? '').trim();
  if (secret === '') throw new CliError(`no ${what}: set ${envName} (or ${option})`, EXIT.usage);
  return secret;
}

/**
 * Wraps a command action: a `CliError` becomes a one-line message and its exit code, never a stack
 * trace. With `--json` the failure is also one JSON document on stdout, in the command's own shape
 * (`base`, e.g. `{ results: [] }`) with `ok: false`, `error` and `exitCode` (docs/sync.md).
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<number | void>,
  base: (options: Record<string, unknown>) => Record<string, unknown> = () => ({ results: [] }),
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await fn(...args);
      if (typeof code === 'number') process.exitCode = code;
    } catch (err) {
      const exit = err instanceof CliError ? err.exitCode : EXIT.failed;
      const message = (err as Error).message;
      process.stderr.write(`ack: ${message}\n`);
      const command = args.findLast((a): a is Command => a instanceof Command);
      const options = command?.opts() ?? {};
      if (options.json === true) printJsonFailure(base(options), message, exit);
      process.exitCode = exit;
    }
  };
}

/** The one JSON document of a command that failed before it had results. */
export function printJsonFailure(base: Record<string, unknown>, message: string, exitCode: number): void {
  // `sync watch` prints one JSON line per event: its failure is one more line, not a block.
  if ('event' in base)
    process.stdout.write(
      `${JSON.stringify({ time: new Date().toISOString(), ok: false, ...base, error: message, exitCode })}\n`,
    );
  else process.stdout.write(`${JSON.stringify({ ok: false, ...base, error: message, exitCode }, null, 2)}\n`);
}
