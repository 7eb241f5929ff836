import fs from 'node:fs/promises';
import { namespaceTag } from './temp-owner.js';

/**
 * A lock between processes (the workers of `ack serve --workers N`, or hosts sharing a folder): a
 * file made with O_EXCL, naming its holder (`<namespace tag> <pid>`). A lock whose holder is
 * provably gone (same machine and pid namespace, no such process) is taken over at once; one older
 * than `staleMs` (a holder on another machine that died) after that. See docs/releases.md
 * "Workers".
 */
export async function withFileLock<T>(file: string, work: () => Promise<T>, staleMs = 60_000): Promise<T> {
  const me = `${namespaceTag() ?? '0'} ${process.pid}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.writeFile(file, me, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await holderGone(file, staleMs)) {
        await fs.rm(file, { force: true });
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(2 ** attempt, 25)));
    }
  }
  try {
    return await work();
  } finally {
    await fs.rm(file, { force: true });
  }
}

async function holderGone(file: string, staleMs: number): Promise<boolean> {
  const [text, st] = await Promise.all([fs.readFile(file, 'utf8').catch(() => ''), fs.stat(file).catch(() => null)]);
  if (!st) return false; // released meanwhile: try again
  if (Date.now() - st.mtimeMs > staleMs) return true;
  const [tag, pidText] = text.split(' ');
  const pid = Number(pidText);
  if (!tag || tag === '0' || tag !== namespaceTag() || !Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
