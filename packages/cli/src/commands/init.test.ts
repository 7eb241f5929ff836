import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAck, startAckServe } from '../test-support/spawn-ack.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('ack init', () => {
  it('lays out a home that ack serve starts with the wwwroot module loaded', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-init-'));
    const home = path.join(dir, 'home');
    const run = await runAck(['init', home]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`next: ack serve --app-dir ${path.join(home, 'app')}`);
    // The token is said to be where it is kept, in plain text (it is not "shown only now").
    const token = /^sync token: (\S+)$/m.exec(run.stdout)?.[1];
    const moduleJson = path.join(home, 'modules', 'wwwroot', 'module.json');
    expect(JSON.parse(fs.readFileSync(moduleJson, 'utf8')).ModuleConfig.FileSyncTokens).toEqual([token]);
    expect(run.stdout).toContain(`  kept in plain text in ${moduleJson} (FileSyncTokens): keep that file private`);
    expect(run.stdout).not.toContain('shown only now');
    for (const f of [
      'app/appsettings.json',
      'modules/wwwroot/module.json',
      'modules/wwwroot/wwwroot/index.html',
      'config/shared_files.json',
    ]) {
      expect(fs.existsSync(path.join(home, f)), f).toBe(true);
    }
    const served = await startAckServe(['--app-dir', path.join(home, 'app'), '--port', '0', '--host', '127.0.0.1']);
    try {
      expect(served.output()).toMatch(/modules loaded: wwwroot;/);
      const res = await fetch(`${served.url}/shared-files/manifest`);
      expect(res.status).toBe(200);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });

  it('refuses a folder that already has files (exit 2) and changes nothing', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-init-'));
    fs.writeFileSync(path.join(dir, 'mine.txt'), 'keep me');
    const run = await runAck(['init', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is not empty/);
    expect(fs.readdirSync(dir)).toEqual(['mine.txt']);
  });
});
