import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTestHosts, type TestHome } from '../test-support/index.js';

// `ack serve` as a user runs it (the built CLI: `pnpm build` first, as `pnpm test` does).
const ACK_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../cli/dist/bin.js');

function runServe(
  appDir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (!fs.existsSync(ACK_BIN)) throw new Error(`${ACK_BIN} is missing: run pnpm build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [ACK_BIN, 'serve', '--app-dir', appDir, '--port', '0', '--host', '127.0.0.1'],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let home: TestHome | undefined;
const hosts = useTestHosts();

describe('ack serve with settings that cannot be used', () => {
  it('exits 2 naming the file, every bad key and what it expects, and never starts', async () => {
    home = hosts.home({ AppSettings: { RunningEnvironment: 'Q', Security: { MaxContractSyncFileBytes: 'abc' } } });
    const run = await runServe(home.appDir);
    const file = path.join(home.appDir, 'appsettings.json');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${file}:3:27: AppSettings:RunningEnvironment: expected one of D, S, P, T, L, got "Q"`,
    );
    expect(run.stderr).toContain(`AppSettings:Security:MaxContractSyncFileBytes: expected an integer > 0, got "abc"`);
    expect(run.stdout).not.toMatch(/listening on/);
  });

  it('exits 2 for invalid JSON and for a missing file', async () => {
    home = hosts.home();
    home.write('app/appsettings.json', '{ "AppSettings": { ]');
    const bad = await runServe(home.appDir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${path.join(home.appDir, 'appsettings.json')}:1:20: not valid JSON`);
    fs.rmSync(path.join(home.appDir, 'appsettings.json'));
    const missing = await runServe(home.appDir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${path.join(home.appDir, 'appsettings.json')}: file not found`);
  });

  it('exits 2 for an environment override that cannot be used, naming the variable', async () => {
    home = hosts.home({ AppSettings: { LoadModules: [] }, Serilog: { WriteTo: [] } });
    const run = await runServe(home.appDir, { AppSettings__Security__ExposeSecretValues: 'sometimes' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'AppSettings:Security:ExposeSecretValues: expected true or false, got "sometimes" (from environment variable AppSettings__Security__ExposeSecretValues)',
    );
  });
});
