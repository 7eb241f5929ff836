import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A throw-away folder holding `files` (text or bytes, folders created); its removal is pushed to
 * `cleanups`, which the test file runs after each test.
 */
export function workDir(
  cleanups: Array<() => void | Promise<void>>,
  files: Record<string, string | Buffer> = {},
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-cli-work-'));
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
