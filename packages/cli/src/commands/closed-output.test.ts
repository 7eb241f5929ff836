import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { ACK_BIN } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// `ack ... | head`: the reader leaves before `ack` is done writing (the BUILT binary, as a user runs it).
const TOKEN = 'closed-output-token';
const hosts = useTestHosts();
const cleanups = useCleanups();

/** Every file's line is `Created <name> (N bytes)`. */
async function uploadTarget(
  name = (i: number) => `HDS/page-${i}.html`,
  count = 300,
): Promise<{ url: string; dir: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
  });
  const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
  const files = Object.fromEntries(Array.from({ length: count }, (_, i) => [name(i), `<p>${i}</p>`]));
  return { url, dir: workDir(cleanups, files) };
}

/** Runs `ack sync upload` with stdout a pipe; `closeAfterFirstLine` closes its reading end once a line came. */
function upload(url: string, dir: string, closeAfterFirstLine: boolean) {
  const child = spawn(process.execPath, [ACK_BIN, 'sync', 'upload', dir, '--module', 'wwwroot', '--url', url], {
    env: { ...process.env, ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (closeAfterFirstLine && stdout.includes('\n')) child.stdout.destroy();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) =>
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      }),
  );
}

describe('a closed stdout', { timeout: 90_000 }, () => {
  it('ends ack sync upload quietly, by SIGPIPE as any program in a pipeline, without a stack trace', async () => {
    // Lines of about 600 bytes, 1,000 of them: nine times a pipe's buffer (64 KiB). With only twice
    // the buffer, this process could read one 64 KiB chunk while the rest fitted in the emptied
    // buffer, and a fast upload ended 0 before the pipe closed (seen in a full run).
    const long = (i: number) => `HDS/${'d'.repeat(200)}/${'e'.repeat(200)}/${'f'.repeat(150)}-${i}.html`;
    const { url, dir } = await uploadTarget(long, 1000);
    const run = await upload(url, dir, true);
    expect(run.stderr).toBe('');
    expect({ code: run.code, signal: run.signal }).toEqual({ code: null, signal: 'SIGPIPE' });
    expect(run.stdout).toMatch(/^Created HDS\/d{200}\/e{200}\/f{150}-\d+\.html \(\d+ bytes\)\n/);
  });

  it('leaves a run whose reader stays to the end as it was: every line, exit 0', async () => {
    const { url, dir } = await uploadTarget();
    const run = await upload(url, dir, false);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.match(/^Created HDS\/page-\d+\.html/gm)).toHaveLength(300);
    expect(run.stdout).toMatch(/300 files uploaded to /);
  });
});
