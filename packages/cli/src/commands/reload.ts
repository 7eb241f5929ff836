import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { SettingsError } from '@ack/host';
import { reloadStateFile, type ReloadState } from '@ack/host/cluster';
import { EXIT } from '../exit-codes.js';
import { pidFileOf } from './serve-workers.js';

/** The longest `ack reload` waits for the restart by default: N workers each start, then drain. */
const RELOAD_WAIT_S = 300;

function readReloadState(file: string): ReloadState | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as ReloadState;
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits for the rolling restart a SIGHUP to `pid` asked for, as the primary tells it in its
 * `reload.json` (`ReloadState`): one after `round`, the last it had begun before the signal (a
 * signal during a restart runs one more after it). Polls the file: the primary and `ack reload`
 * share no other channel than the pid file's folder.
 */
async function waitForReload(file: string, pid: number, round: number, waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const state = readReloadState(file);
    if (state && state.pid === pid && state.round > round && state.state !== 'running') {
      const replaced = state.replaced.map((r) => `${r.old} -> ${r.new}`).join(', ');
      if (state.state === 'done') {
        process.stdout.write(
          `rolling restart done: ${state.replaced.length} worker(s) replaced (${replaced || 'none'}); workers ${state.workers.join(', ')}\n`,
        );
        return EXIT.ok;
      }
      process.stderr.write(
        `ack: rolling restart stopped after ${state.replaced.length} worker(s) replaced${replaced ? ` (${replaced})` : ''}: ${state.error ?? 'no reason given'}; the workers serving: ${state.workers.join(', ') || 'none'}\n`,
      );
      return EXIT.failed;
    }
    if (!isRunning(pid)) {
      process.stderr.write(`ack: the primary ${pid} ended before the rolling restart was over\n`);
      return EXIT.failed;
    }
    if (Date.now() >= deadline) {
      process.stderr.write(
        `ack: the rolling restart was not over within ${Math.round(waitMs / 1000)} s; it goes on (see the primary's log)\n`,
      );
      return EXIT.failed;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `ack reload`: a rolling restart of the workers of the `ack serve --workers` running over a home. */
export function registerReload(program: Command): void {
  program
    .command('reload')
    .description(
      'restart the workers of a running `ack serve --workers N`, one at a time (no request fails), and wait for the outcome',
    )
    .option('--app-dir <dir>', 'folder holding appsettings.json; default: the current folder')
    .option('--no-wait', 'only ask for the restart, and return at once')
    .option('--timeout <seconds>', `longest wait for the restart (default ${RELOAD_WAIT_S})`, (v: string) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a number above 0');
      return n;
    })
    .action(async (opts: { appDir?: string; wait: boolean; timeout?: number }) => {
      let pidFile: string;
      try {
        // The settings the new workers would start with: a file that does not read is bad input
        // (exit 2), and the running workers are left alone rather than replaced by ones that fail.
        pidFile = pidFileOf(path.resolve(opts.appDir ?? process.cwd()));
      } catch (err) {
        if (!(err instanceof SettingsError)) throw err;
        for (const line of err.message.split('\n')) process.stderr.write(`ack: ${line}\n`);
        process.stderr.write('ack: nothing sent; the workers keep serving\n');
        process.exit(EXIT.usage);
      }
      let pid: number;
      try {
        pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
      } catch {
        process.stderr.write(`ack: no \`ack serve --workers\` runs over this home (no ${pidFile})\n`);
        process.exit(EXIT.failed);
      }
      const stateFile = reloadStateFile(pidFile);
      const before = readReloadState(stateFile);
      const round = before?.pid === pid ? before.round : 0;
      try {
        process.kill(pid, 'SIGHUP');
      } catch {
        process.stderr.write(`ack: the primary ${pid} named in ${pidFile} is not running\n`);
        process.exit(EXIT.failed);
      }
      if (!opts.wait) {
        process.stdout.write(`rolling restart asked of primary ${pid}\n`);
        return;
      }
      process.stderr.write(
        `ack: rolling restart asked of primary ${pid}; waiting for it (--no-wait returns at once)\n`,
      );
      process.exitCode = await waitForReload(stateFile, pid, round, (opts.timeout ?? RELOAD_WAIT_S) * 1000);
    });
}
