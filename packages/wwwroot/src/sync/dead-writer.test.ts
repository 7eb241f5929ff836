import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import { testAppSettings, useTestHosts, waitFor } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';

// A host that stopped mid-write (SIGTERM, a crash) leaves its temporary files; the next start
// removes them at once when their writer provably ended, however fresh they are, and leaves those
// of a writer still running, as another host or worker sharing the home would be (docs/sync.md
// "Interrupted writes"). The writers are real processes running the built host (`pnpm build`).

const TOKEN = 'dead-writer-token';
const SAFE_WRITE = new URL('../../../host/dist/fs/safe-write.js', import.meta.url).href;
const hosts = useTestHosts();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A process staging a file in `dir` that never ends; resolves once its temporary file is there. */
async function writer(dir: string): Promise<{ child: ChildProcess; file: string }> {
  const before = new Set(fs.readdirSync(dir));
  const script = `import(${JSON.stringify(SAFE_WRITE)}).then(async (m) => {
    const { PassThrough } = await import('node:stream');
    const source = new PassThrough();
    source.write('half of it');
    void m.stageStream(${JSON.stringify(dir)}, source, { nameHint: 'page.html' }).catch(() => undefined);
    setInterval(() => undefined, 60_000);
  })`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
  children.push(child);
  let file: string | undefined;
  await waitFor(
    () => (file = fs.readdirSync(dir).find((f) => !before.has(f) && isTemporaryFileName(f))) !== undefined,
    { message: 'the writer staged its file', timeout: 20_000 },
  );
  return { child, file: path.join(dir, file!) };
}

describe('temporary files of a writer that ended', () => {
  it('are removed at the next start however fresh; those of a writer still running stay', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'contracts/wwwroot/HDS/page.html': 'old',
    });
    const dir = path.join(home.home, 'contracts', 'wwwroot', 'HDS');
    const stopped = await writer(dir);
    const running = await writer(dir);
    const ended = new Promise((resolve) => stopped.child.once('exit', resolve));
    stopped.child.kill('SIGTERM');
    await ended;
    expect(fs.existsSync(stopped.file)).toBe(true);

    const h = await hosts.start(home, { wwwroot: wwwrootModule });
    await waitFor(() => !fs.existsSync(stopped.file), { message: 'the dead writer file was swept', timeout: 20_000 });
    expect(fs.existsSync(running.file)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'page.html'), 'utf8')).toBe('old');
    // The host answers as usual, and lists no temporary file.
    const res = await fetch(`${h.url}/wwwroot/api/sync/list?moduleName=wwwroot`, {
      headers: { Authorization: basicAuth(TOKEN) },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).not.toContain('ack-tmp');
  });
});
