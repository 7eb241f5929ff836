import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepTemporaryFiles } from './sweep.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('sweepTemporaryFiles', () => {
  it('removes temporary files left by a dead write, older than the threshold, and nothing else', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-sweep-'));
    fs.mkdirSync(path.join(dir, 'HDS', 'SYS'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'HDS', 'SYS', 'keep.html'), 'x');
    fs.writeFileSync(path.join(dir, 'HDS', '.hidden'), 'x');
    const stale = path.join(dir, 'HDS', 'SYS', '.page.html.0a1b2c3d.ack-tmp');
    const fresh = path.join(dir, 'HDS', '.other.json.9f8e7d6c.ack-tmp');
    fs.writeFileSync(stale, 'half');
    fs.writeFileSync(fresh, 'half');
    const hourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(stale, hourAgo, hourAgo);
    const removed = await sweepTemporaryFiles(dir, 10 * 60_000);
    expect(removed).toEqual([stale]);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'HDS', 'SYS', 'keep.html'), 'utf8')).toBe('x');
    expect(fs.existsSync(path.join(dir, 'HDS', '.hidden'))).toBe(true);
  });

  it('is quiet about a folder that does not exist', async () => {
    expect(await sweepTemporaryFiles(path.join(os.tmpdir(), 'ack-no-such-folder-xyz'))).toEqual([]);
  });
});
