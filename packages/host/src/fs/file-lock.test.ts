import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileLock } from './file-lock.js';
import { namespaceTag } from './temp-owner.js';

// The lock between processes (docs/releases.md "Workers"): one holder at a time; a holder that is
// gone does not block; a live one does.

const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ack-lock-'));

describe('withFileLock', () => {
  it('lets one holder in at a time and leaves no lock file', async () => {
    const file = path.join(dir(), '.lock');
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(file, async () => {
          most = Math.max(most, ++inside);
          await new Promise((r) => setTimeout(r, 2));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('takes over the lock of a process that is gone, and waits for one that is alive', async () => {
    const file = path.join(dir(), '.lock');
    // A process that has exited: its pid names nobody now.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    fs.writeFileSync(file, `${namespaceTag() ?? '0'} ${gone}`);
    expect(await withFileLock(file, async () => 'taken')).toBe('taken');

    // The neighbour that must wait: a holder alive (this very process).
    fs.writeFileSync(file, `${namespaceTag() ?? '0'} ${process.pid}`);
    let ran = false;
    const waiting = withFileLock(file, async () => (ran = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(ran).toBe(false);
    fs.rmSync(file);
    await waiting;
    expect(ran).toBe(true);
  });
});
