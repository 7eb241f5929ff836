import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Mounts a small tmpfs over `dir` so that writes past `bytes` fail with a real ENOSPC from the
 * kernel (tests of a full disk). Needs the right to mount (root, as in CI); throws a clear error
 * otherwise. Returns the unmount function.
 */
export function mountTinyFilesystem(dir: string, bytes: number): () => void {
  fs.mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(
      `this test mounts a ${bytes}-byte tmpfs to get a real ENOSPC and needs the right to mount (run it as root): ${(err as Error).message}`,
      { cause: err },
    );
  }
  return () => execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
}
