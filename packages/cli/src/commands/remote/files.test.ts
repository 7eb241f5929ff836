import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanFolder } from './files.js';

// The local side of a folder push (docs/sync.md "The delta"): which files a folder holds, with the
// facts the local digest cache is keyed by, in the order a host lists them.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-scan-'));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

describe('scanFolder', () => {
  it('lists files folder by folder in code-unit order, a folder where its name sorts, ignored names left out', async () => {
    const root = folder({
      'b.html': 'b',
      'B.html': 'B',
      'a/z.js': 'z',
      'a/Y.js': 'Y',
      'a-b.txt': '-',
      'a_b.txt': '_',
      'é.txt': 'é',
      'z/😀.txt': 'e',
      '.git/config': 'x',
      'a/.hidden': 'x',
      'keep~': 'x',
      'swap.swp': 'x',
    });
    const files = await scanFolder(root);
    expect(files.map((f) => f.rel)).toEqual([
      'B.html',
      'a/Y.js',
      'a/z.js',
      'a-b.txt',
      'a_b.txt',
      'b.html',
      'z/😀.txt',
      'é.txt',
    ]);
    const stat = fs.statSync(path.join(root, 'a', 'z.js'));
    expect(files[2]).toEqual({
      rel: 'a/z.js',
      abs: path.join(root, 'a', 'z.js'),
      size: 1,
      mtimeMs: stat.mtimeMs,
      ctimeMs: stat.ctimeMs,
      ino: stat.ino,
    });
  });

  it.skipIf(process.platform === 'win32')(
    'follows a link to a file (its target facts), skips a link to a folder, a dangling link and a FIFO',
    async () => {
      const root = folder({ 'real/a.txt': 'aaa' });
      const outside = folder({ 'target.txt': 'target', 'dir/inner.txt': 'i' });
      fs.symlinkSync(path.join(outside, 'target.txt'), path.join(root, 'link.txt'));
      fs.symlinkSync(path.join(outside, 'dir'), path.join(root, 'linked-dir'));
      fs.symlinkSync(path.join(outside, 'gone.txt'), path.join(root, 'dangling.txt'));
      execFileSync('mkfifo', [path.join(root, 'fifo')]);
      const files = await scanFolder(root);
      expect(files.map((f) => f.rel)).toEqual(['link.txt', 'real/a.txt']);
      const target = fs.statSync(path.join(outside, 'target.txt'));
      expect(files[0]).toMatchObject({ abs: path.join(root, 'link.txt'), size: 6, ino: target.ino });
    },
  );
});
