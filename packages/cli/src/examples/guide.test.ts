import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@ack/host/test-support';
import { ACK_BIN } from '../test-support/spawn-ack.js';

// The guide (docs/guide/*.md) as a reader follows it: every ```sh block of every page, in order, in
// one work folder, with `ack` the BUILT binary on the PATH (run `pnpm build` first). A ```text block
// right after a ```sh block is what it prints: each of its lines must be a line of the output, `…`
// standing for any text. Info words after `sh`: `background` (a command a reader leaves running,
// such as `ack serve`: started in the background, waited for until its text shows, stopped with
// Ctrl+C at the end of the page) and `retry` (the output of a command that follows a change made by
// something running, such as `ack sync watch`: run again, a bounded number of times, until it shows).
// The guide's ports 8421 (the default) and 8422 become free ports, so the run never meets a host
// already there.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const guide = path.join(repo, 'docs/guide');
const pages = fs
  .readdirSync(guide)
  .filter((f) => /^\d\d-.*\.md$/.test(f))
  .sort();

interface Block {
  script: string;
  flags: string[];
  expected: string[];
  line: number;
}

/** The ```sh blocks of a page, each with the ```text block that follows it, if any. */
function blocksOf(text: string): Block[] {
  const fences = [...text.matchAll(/^```(\w*)([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm)];
  const blocks: Block[] = [];
  fences.forEach((m, i) => {
    if (m[1] !== 'sh') return;
    const next = fences[i + 1];
    const between = next ? text.slice(m.index + m[0].length, next.index) : '';
    const expected =
      next && next[1] === 'text' && between.trim() === '' ? next[3]!.split('\n').filter((l) => l.trim() !== '') : [];
    blocks.push({
      script: m[3]!,
      flags: m[2]!.trim().split(/\s+/).filter(Boolean),
      expected,
      line: text.slice(0, m.index).split('\n').length,
    });
  });
  return blocks;
}

/** A line of a ```text block as a pattern: `…` is any text, the rest is literal. */
const linePattern = (line: string) =>
  new RegExp(
    line
      .trim()
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  );
const missing = (expected: string[], output: string) => {
  const lines = output.split('\n');
  return expected.filter((e) => !lines.some((l) => linePattern(e).test(l)));
};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-guide-'));
const state = path.join(work, '.guide-state');
fs.mkdirSync(path.join(state, 'bin'), { recursive: true });
fs.writeFileSync(
  path.join(state, 'bin/ack'),
  `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(ACK_BIN)} "$@"\n`,
  { mode: 0o755 },
);
// What a reader's shell keeps from one block to the next: the folder and the exported variables.
fs.writeFileSync(path.join(state, 'cwd'), work);
fs.writeFileSync(path.join(state, 'env'), '');
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${path.join(state, 'bin')}:${process.env.PATH}`,
  XDG_CACHE_HOME: path.join(state, 'cache'),
  ACK_URL: '',
  ACK_SYNC_TOKEN: '',
};
const prelude = `set -e -o pipefail\ncd "$(cat ${state}/cwd)"\n. ${state}/env\n`;
const epilogue = `\nexport -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_)=' > ${state}/env || true\npwd > ${state}/cwd\n`;

const running: ChildProcess[] = [];
afterAll(() => {
  for (const child of running) if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

function bash(script: string, background = false) {
  const child = spawn('bash', ['-c', script], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  if (background) running.push(child);
  return { child, output: () => output, exited };
}

async function runBlock(block: Block): Promise<string> {
  const run = bash(prelude + block.script + epilogue);
  const timer = setTimeout(() => process.kill(-run.child.pid!, 'SIGKILL'), 60_000);
  const code = await run.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`exit ${code}:\n${run.output()}`);
  return run.output();
}

/** Ctrl+C for what a page left running, then waits for it to end (SIGKILL after 15 s). */
async function stopBackground(): Promise<void> {
  for (const child of running.splice(0)) {
    if (child.exitCode !== null) continue;
    const closed = new Promise((resolve) => child.once('close', resolve));
    process.kill(-child.pid!, 'SIGINT');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
    await closed;
    clearTimeout(timer);
  }
}

describe('the guide, run as written', () => {
  const ports: Record<string, string> = {};
  beforeAll(async () => {
    ports['8421'] = String(await freePort());
    ports['8422'] = String(await freePort());
    // `ack serve` without --port listens on AppSettings:ServerPort, 8421 by default.
    env.AppSettings__ServerPort = ports['8421'];
  });
  const localize = (text: string) => text.replace(/\b842[12]\b/g, (p) => ports[p]!);

  it('has its pages', () => {
    expect(pages.length).toBeGreaterThanOrEqual(5);
  });

  for (const page of pages) {
    it(page, { timeout: 300_000 }, async () => {
      const blocks = blocksOf(localize(fs.readFileSync(path.join(guide, page), 'utf8')));
      expect(blocks.length).toBeGreaterThan(0);
      try {
        for (const block of blocks) {
          const where = `${page}:${block.line}`;
          if (block.flags.includes('background')) {
            // Exported variables of earlier blocks apply; nothing it sets is kept.
            const run = bash(prelude + block.script, true);
            const deadline = Date.now() + 30_000;
            while (missing(block.expected, run.output()).length > 0) {
              if (run.child.exitCode !== null || Date.now() > deadline)
                throw new Error(`${where}: did not show ${missing(block.expected, run.output())}:\n${run.output()}`);
              await new Promise((r) => setTimeout(r, 100));
            }
            continue;
          }
          let output = await runBlock(block).catch((e: Error) => {
            throw new Error(`${where}: ${e.message}`);
          });
          for (let attempt = 1; block.flags.includes('retry') && attempt < 50; attempt++) {
            if (missing(block.expected, output).length === 0) break;
            await new Promise((r) => setTimeout(r, 200));
            output = await runBlock(block);
          }
          expect(missing(block.expected, output), `${where} printed:\n${output}`).toEqual([]);
        }
      } finally {
        await stopBackground();
      }
    });
  }
});
