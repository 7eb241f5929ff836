import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'prune-dist.mjs');
let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

// A package build runs it after tsc, so that the output of a moved source never ships (docs/releasing.md).
test('removes the compiler output of a source that is gone, and nothing else', () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-prune-'));
  const map = (source: string) => JSON.stringify({ version: 3, sources: [source] });
  write(dir, {
    'src/kept.ts': 'export {};',
    'src/serving/moved.ts': 'export {};',
    'dist/kept.js': '',
    'dist/kept.js.map': map('../src/kept.ts'),
    'dist/kept.d.ts': '',
    'dist/kept.d.ts.map': map('../src/kept.ts'),
    'dist/serving/moved.js': '',
    'dist/serving/moved.d.ts': '',
    // The old place of moved.ts: every output goes, then its empty folder.
    'dist/engine/moved.js': '',
    'dist/engine/moved.js.map': map('../../src/engine/moved.ts'),
    'dist/engine/moved.d.ts': '',
    'dist/engine/moved.d.ts.map': map('../../src/engine/moved.ts'),
    // A half-pruned leftover: no declaration beside it, but a one-source map.
    'dist/old.js': '',
    'dist/old.js.map': map('../src/old.ts'),
    // A bundle (several sources in its map) and other files are not the compiler's.
    'dist/bundle.js': '',
    'dist/bundle.js.map': JSON.stringify({ version: 3, sources: ['../src/kept.ts', '../src/serving/moved.ts'] }),
    'dist/bundle.mjs': '',
    'dist/notes.txt': '',
  });
  const out = execFileSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' });
  expect(out).toBe(`${path.basename(dir)}: removed 6 stale file(s) from dist/\n`);
  const left = (fs.readdirSync(path.join(dir, 'dist'), { recursive: true }) as string[])
    .map((p) => p.split(path.sep).join('/'))
    .sort();
  expect(left).toEqual([
    'bundle.js',
    'bundle.js.map',
    'bundle.mjs',
    'kept.d.ts',
    'kept.d.ts.map',
    'kept.js',
    'kept.js.map',
    'notes.txt',
    'serving',
    'serving/moved.d.ts',
    'serving/moved.js',
  ]);
});
