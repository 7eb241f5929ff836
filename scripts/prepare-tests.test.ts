import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// `pnpm test` starts with scripts/prepare-tests.mjs: every program the suite drives is checked
// before anything is installed or built. ACK_TEST_NO_INSTALL makes it report instead of installing
// (as a user who is not root sees it).
const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'prepare-tests.mjs');
const hidden = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-path-'));
afterAll(() => fs.rmSync(hidden, { recursive: true, force: true }));

/** A PATH with every program of the usual folders except `hide`. */
function pathWithout(...hide: string[]): string {
  const bin = path.join(hidden, hide.join('-'));
  fs.mkdirSync(bin, { recursive: true });
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin', path.dirname(process.execPath)]) {
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) {
      const link = path.join(bin, name);
      if (!hide.includes(name) && !fs.existsSync(link)) fs.symlinkSync(path.join(dir, name), link);
    }
  }
  return bin;
}

const run = (env: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, [script], {
    env: { ...process.env, ACK_TEST_NO_INSTALL: '1', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('the check before the test run', () => {
  it('passes on a machine with every program and reachable databases', () => {
    const result = run({});
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('stops with one line naming the missing programs and their packages', () => {
    const result = run({ PATH: pathWithout('caddy', 'gtlsclient') });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^pnpm test needs caddy \(caddy: .*\), gtlsclient \(ngtcp2-client: .*\).*apt-get install caddy ngtcp2-client/,
    );
    expect(result.stdout).toBe('');
  });

  it('names a Chromium given in ACK_CHROMIUM_PATH that is not there', () => {
    const result = run({ ACK_CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/chromium at \/nonexistent\/chromium \(ACK_CHROMIUM_PATH\)/),
    ]);
  });

  it('asks for the database server when no database answers where it looks', () => {
    const result = run({ ACK_TEST_REDIS: '127.0.0.1:1', PATH: pathWithout('redis-server') });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /redis-server \(redis-server: a private Redis \(none answers at 127\.0\.0\.1:1; set ACK_TEST_REDIS/,
    );
  });
});
