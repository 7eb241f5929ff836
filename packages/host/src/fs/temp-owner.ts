import { createHash } from 'node:crypto';
import fs from 'node:fs';

/**
 * Who wrote a temporary file (docs/sync.md "Interrupted writes"): its name carries the writing
 * process's id and a tag of the machine and process namespace it ran in (the boot id and the pid
 * namespace, Linux). A start-up sweep removes at once a file whose writer is provably gone: same
 * tag (so the process id means the same process), and no process of that id alive. Any doubt
 * (another machine or container sharing the folder, a tag that cannot be worked out, a process id
 * in use again) leaves the file to the age rule.
 */

/** The tag of this machine's boot and pid namespace, 8 hex; undefined where it cannot be known. */
export function namespaceTag(
  read: (file: string) => string = (file) => fs.readFileSync(file, 'utf8'),
  link: (file: string) => string = (file) => fs.readlinkSync(file),
): string | undefined {
  try {
    const boot = read('/proc/sys/kernel/random/boot_id').trim();
    const pids = link('/proc/self/ns/pid');
    if (!boot || !pids) return undefined;
    return createHash('sha256').update(`${boot}\0${pids}`).digest('hex').slice(0, 8);
  } catch {
    return undefined;
  }
}

/** The owner part of this process's temporary names: `<tag>-<pid, base 36>-` (tag `0` when unknown). */
export function ownerPart(tag: string | undefined, pid: number): string {
  return `${tag ?? '0'}-${pid.toString(36)}-`;
}

/** The writer a temporary file name names, when it carries one: `.<base>.<random><tag>-<pid>-<n>.ack-tmp`. */
export function ownerOf(name: string): { tag: string; pid: number } | undefined {
  const match = /\.[0-9a-f]{8}([0-9a-f]{8})-([0-9a-z]{1,11})-[0-9a-z]+\.ack-tmp$/.exec(name);
  if (!match) return undefined;
  const pid = parseInt(match[2]!, 36);
  return Number.isSafeInteger(pid) && pid > 0 ? { tag: match[1]!, pid } : undefined;
}

/** True when a process of this id runs here (one we may not signal runs too). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * True when the file named `name` was written by a process that has provably ended: named with
 * this machine's `tag`, by another process than this one, and no process of that id is alive.
 */
export function writerGone(
  name: string,
  tag: string | undefined,
  alive: (pid: number) => boolean = processAlive,
  self = process.pid,
): boolean {
  const owner = ownerOf(name);
  if (!owner || tag === undefined || owner.tag !== tag || owner.pid === self) return false;
  return !alive(owner.pid);
}
