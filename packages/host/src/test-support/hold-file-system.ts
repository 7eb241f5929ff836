import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Holds every thread of libuv's pool, so that the host's file system calls wait, until the
 * returned function lets them go. Each thread blocks opening a FIFO no one writes to; opening it
 * for reading and writing releases it. Sockets are not on that pool: the host still reads them.
 */
export function holdFileSystem(): () => void {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-hold-'));
  const fifos = Array.from({ length: threads }, (_, i) => path.join(dir, `hold-${i}`));
  for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
  const held = fifos.map((fifo) => fs.promises.open(fifo, 'r'));
  return () => {
    const writers = fifos.map((fifo) => fs.openSync(fifo, 'r+'));
    void Promise.all(held).then(async (handles) => {
      for (const handle of handles) await handle.close();
      for (const fd of writers) fs.closeSync(fd);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  };
}
