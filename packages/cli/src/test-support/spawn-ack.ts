import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `ack` binary; CLI tests run it as a user would (`pnpm test` builds first). */
export const ACK_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/bin.js');

export interface AckRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The user cache folder the `ack` runs of this test process see (the local digest cache of `ack sync
 * upload <dir>` lives there): a temporary one, never the real user's, removed at exit.
 */
let testCacheDir: string | undefined;
export function testCacheHome(): string {
  if (!testCacheDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-cli-cache-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    testCacheDir = dir;
  }
  return testCacheDir;
}

/** Runs `ack ...args` to completion. */
export function runAck(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<AckRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ACK_BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, XDG_CACHE_HOME: testCacheHome(), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/**
 * `ack sync watch ...args` left running: its output so far (stdout and stderr together) and its
 * exit code once it ends. The caller stops it (SIGINT) and pushes a SIGKILL to its cleanups.
 */
export function watchAck(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [ACK_BIN, 'sync', 'watch', ...args], {
    env: { ...process.env, XDG_CACHE_HOME: testCacheHome(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

export interface ServingAck {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
}

/** Starts `ack serve` and resolves once it logs the URL it listens on. */
export function startAckServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServingAck> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ACK_BIN, 'serve', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1]!, output: () => out, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`ack serve exited (${code}) before listening:\n${out}`)));
  });
}
