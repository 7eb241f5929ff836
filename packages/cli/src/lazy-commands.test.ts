import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordLoadedModules } from './test-support/loaded-modules.js';
import { ACK_BIN } from './test-support/spawn-ack.js';

// The ack command loads only the command it runs (docs/architecture.md "The ack command"): a sync
// push or `--version` never pays for the host's start-up. Checked by recording every module the
// built command loads (the modules in each file of its bundle it loads), as users run it.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-imports-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const recorder = recordLoadedModules(dir);

function loadedBy(args: string[], options: { failing?: boolean } = {}): string[] {
  const run = spawnSync(process.execPath, [...recorder.nodeOptions, ACK_BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ACK_SYNC_TOKEN: '' },
  });
  expect(run.status === 0, run.stderr).toBe(!options.failing);
  return recorder.take();
}

const hostCode = (files: string[]) =>
  files.filter((f) => /\/(host|wwwroot)\/dist\//.test(f) || f.includes('/express/'));

describe('the ack command', () => {
  it('loads no host code for --version', () => {
    expect(hostCode(loadedBy(['--version']))).toEqual([]);
  });

  it('loads no host code for ack sync upload', () => {
    const files = loadedBy(['sync', 'upload', '--help']);
    expect(files.some((f) => f.endsWith('/commands/sync.js'))).toBe(true);
    expect(hostCode(files)).toEqual([]);
  });

  it('loads no file watcher for ack sync upload of a folder', () => {
    const files = loadedBy(['sync', 'upload', dir, '--module', 'wwwroot', '--dry-run']);
    expect(files.some((f) => f.endsWith('/commands/remote/delta-upload.js'))).toBe(true);
    expect(files.filter((f) => f.includes('chokidar') || f.endsWith('/remote/watch.js'))).toEqual([]);
  });

  it('loads the file watcher for ack sync watch (its neighbour that needs it)', () => {
    // Without a token the command stops at once, after loading what it runs.
    const files = loadedBy(['sync', 'watch', dir, '--module', 'wwwroot'], { failing: true });
    expect(files.some((f) => f.includes('chokidar'))).toBe(true);
  });

  it('loads the host for ack check (its neighbour that needs it)', () => {
    const files = loadedBy(['check', '--help']);
    expect(files.some((f) => /\/host\/dist\//.test(f))).toBe(true);
  });

  it('keeps its compiled code in a compile cache where Node has one (22.1 and later), else writes none', () => {
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    execFileSync(process.execPath, [ACK_BIN, '--version'], { encoding: 'utf8', env });
    const hasCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    expect(fs.existsSync(path.join(tmp, 'node-compile-cache'))).toBe(hasCache);
  });
});
