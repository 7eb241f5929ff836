import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { workDir } from '../test-support/work.js';

// examples/cluster/run.sh as a user starts it, in a copy of the repository layout it looks in
// (`packages/cli/dist/bin.js`, two folders up), with stand-ins for ack and nginx on the PATH that
// note how they were called: which ack it runs, or that it stops before starting anything.
const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/cluster');
const cleanups = useCleanups();

/** A copy of run.sh and its template at `examples/cluster/` in a fresh folder, and a PATH of stand-ins. */
function layout(options: { built: boolean; ackOnPath?: string }) {
  const root = workDir(cleanups);
  const calls = path.join(root, 'calls.log');
  const note = (name: string) => `#!/bin/sh\necho "${name} $*" >> '${calls}'\n`;
  const files: Record<string, string> = {
    'examples/cluster/run.sh': fs.readFileSync(path.join(EXAMPLE, 'run.sh'), 'utf8'),
    'examples/cluster/nginx.conf.template': fs.readFileSync(path.join(EXAMPLE, 'nginx.conf.template'), 'utf8'),
    'bin/nginx': note('nginx'),
  };
  if (options.built)
    files['packages/cli/dist/bin.js'] =
      `require('fs').appendFileSync(${JSON.stringify(calls)}, 'built ' + process.argv.slice(2).join(' ') + '\\n');\n`;
  if (options.ackOnPath !== undefined) files['bin/ack'] = options.ackOnPath;
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text, { mode: 0o755 });
  }
  // Only the stand-ins, the shell's tools and node: no ack of this repository's node_modules.
  const PATH = [path.join(root, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(':');
  return { script: path.join(root, 'examples/cluster/run.sh'), calls, PATH };
}

function run(script: string, PATH: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Its own process group: run.sh ends with `kill 0` on its group.
  const child = spawn('/usr/bin/bash', [script], { env: { PATH, HOME: '/tmp' }, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const calls = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').sort() : []);

describe('examples/cluster/run.sh', () => {
  it('without a built ack or one on the PATH: one line saying what to do, exit 1, and nothing started', async () => {
    const l = layout({ built: false });
    const r = await run(l.script, l.PATH);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'run.sh: no ack to run: build it first (pnpm install && pnpm build at the repository root), or put ack on the PATH\n',
    );
    expect(calls(l.calls)).toEqual([]);
  });

  it('an ack on the PATH that is another program (the grep-like tool) is not taken for this one', async () => {
    const l = layout({
      built: false,
      ackOnPath: '#!/bin/sh\necho "Usage: ack [OPTION]... PATTERN [FILES OR DIRECTORIES]"\n',
    });
    const r = await run(l.script, l.PATH);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^run\.sh: no ack to run: /);
    expect(calls(l.calls)).toEqual([]);
  });

  it('its neighbour: the built ack of the repository is found and runs both hosts, then nginx', async () => {
    const l = layout({ built: true });
    const r = await run(l.script, l.PATH);
    expect(r.stderr).toBe('');
    const home = path.join(path.dirname(l.script), 'home', 'app');
    expect(calls(l.calls)).toEqual([
      `built serve --app-dir ${home} --host 127.0.0.1 --port 8501`,
      `built serve --app-dir ${home} --host 127.0.0.1 --port 8502`,
      expect.stringMatching(/^nginx -c \S+\/nginx\.conf -p \S+$/),
    ]);
  });
});
