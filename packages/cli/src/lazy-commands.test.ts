import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ACK_BIN } from './test-support/spawn-ack.js';

// The ack command loads only the command it runs (docs/architecture.md "The ack command"): a sync
// push or `--version` never pays for the host's start-up. Checked by recording every ES module the
// built command resolves (a module resolve hook), as users run it.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-imports-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const log = path.join(dir, 'resolved.txt');
fs.writeFileSync(
  path.join(dir, 'hooks.mjs'),
  `import fs from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  fs.appendFileSync(${JSON.stringify(log)}, result.url + '\\n');
  return result;
}`,
);
fs.writeFileSync(
  path.join(dir, 'register.mjs'),
  `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});`,
);

function resolvedBy(args: string[], options: { failing?: boolean } = {}): string[] {
  fs.rmSync(log, { force: true });
  const run = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href, ACK_BIN, ...args],
    { encoding: 'utf8', env: { ...process.env, ACK_SYNC_TOKEN: '' } },
  );
  expect(run.status === 0).toBe(!options.failing);
  return fs.readFileSync(log, 'utf8').trim().split('\n');
}

const hostCode = (urls: string[]) => urls.filter((u) => /\/(host|wwwroot)\/dist\//.test(u) || u.includes('/express/'));

describe('the ack command', () => {
  it('loads no host code for --version', () => {
    expect(hostCode(resolvedBy(['--version']))).toEqual([]);
  });

  it('loads no host code for ack sync upload', () => {
    const urls = resolvedBy(['sync', 'upload', '--help']);
    expect(urls.some((u) => u.includes('/commands/sync.js'))).toBe(true);
    expect(hostCode(urls)).toEqual([]);
  });

  it('loads no file watcher for ack sync upload of a folder', () => {
    const urls = resolvedBy(['sync', 'upload', dir, '--module', 'wwwroot', '--dry-run']);
    expect(urls.some((u) => u.includes('/commands/remote/delta-upload.js'))).toBe(true);
    expect(urls.filter((u) => u.includes('chokidar') || u.includes('/remote/watch.js'))).toEqual([]);
  });

  it('loads the file watcher for ack sync watch (its neighbour that needs it)', () => {
    // Without a token the command stops at once, after loading what it runs.
    const urls = resolvedBy(['sync', 'watch', dir, '--module', 'wwwroot'], { failing: true });
    expect(urls.some((u) => u.includes('chokidar'))).toBe(true);
  });

  it('loads the host for ack check (its neighbour that needs it)', () => {
    const urls = resolvedBy(['check', '--help']);
    expect(urls.some((u) => /\/host\/dist\/index\.js$/.test(u))).toBe(true);
  });
});
