// Pinning and CPU accounting: the server under test on CPU 0, the load generator on CPU 1 (when
// `taskset` exists and the machine has two CPUs or more), and CPU seconds read from /proc.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

const hasTaskset = spawnSync('taskset', ['--version']).status === 0;
export const pinning = hasTaskset && os.cpus().length >= 2;

/** The command line that runs `argv` on `cpu` (unchanged without taskset). */
export function pinned(cpu, argv) {
  return pinning ? ['taskset', '-c', String(cpu), ...argv] : argv;
}

const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds (user + system) used so far by a process and its live children (nginx's worker). */
export function cpuSeconds(pid) {
  let total = 0;
  const one = (p) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / TICKS;
      const children = fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim();
      for (const c of children ? children.split(' ') : []) one(Number(c));
    } catch {
      // Not Linux, or the process is gone: no figure.
    }
  };
  one(pid);
  return total;
}
