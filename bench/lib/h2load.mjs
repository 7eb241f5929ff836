// Runs h2load (nghttp2's HTTP/2 load generator: one thread, 16 connections, 16 streams each) pinned
// to CPU 1, and reads its own CPU time from the shell's `times`, as wrk.mjs does for wrk.
import { spawn, spawnSync } from 'node:child_process';
import { pinned } from './cpu.mjs';

export const H2_CONNECTIONS = 16;
export const H2_STREAMS = 16;

export function h2loadVersion() {
  const r = spawnSync('h2load', ['--version'], { encoding: 'utf8' });
  if (r.error) return undefined;
  return `${r.stdout}${r.stderr}`.split('\n')[0].trim();
}

const UNITS = { B: 1e-6, KB: 1e-3, MB: 1, GB: 1e3 };

/**
 * One measurement of `requests` requests: `{ rps, mbps, seconds, done, failed, status, loadCpu }`.
 * A count, not h2load's duration mode (`-D`): at the end of a duration h2load now and then waits
 * for ever on streams a Node server has already answered; a count always ends. The caller sizes the
 * count from the rate of the run before (bench/suites/h2.mjs).
 */
export function h2load({ url, requests, headers = {} }) {
  const args = ['-t1', `-c${H2_CONNECTIONS}`, `-m${H2_STREAMS}`, '-n', String(requests)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k.toLowerCase()}: ${v}`);
  args.push(url);
  const quoted = ['h2load', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const [cmd, ...rest] = pinned(1, ['bash', '-c', `${quoted}; times`]);
    const child = spawn(cmd, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.once('error', reject);
    // A server that leaves a stream unanswered would hold the run for ever: past a minute it is
    // stopped and said so.
    let stuck = false;
    const timer = setTimeout(() => {
      stuck = true;
      spawnSync('pkill', ['-TERM', '-P', String(child.pid)]);
    }, 60_000);
    child.once('exit', () => {
      clearTimeout(timer);
      if (stuck) return reject(new Error('h2load did not finish within 60 s: streams left unanswered'));
      const fin = /finished in ([\d.]+)(m?s), ([\d.]+) req\/s, ([\d.]+)([KMG]?B)\/s/.exec(out);
      const req = /requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored/.exec(out);
      const st = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
      if (!fin || !req || !st) return reject(new Error(`h2load gave no summary: ${out.slice(-800)}`));
      const secs = Number(fin[1]) / (fin[2] === 'ms' ? 1000 : 1);
      const t = [...out.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      resolve({
        seconds: secs,
        rps: Number(fin[3]),
        mbps: Number(fin[4]) * UNITS[fin[5]],
        done: Number(req[1]),
        failed: Number(req[2]) + Number(req[3]),
        status: { '2xx': Number(st[1]), '3xx': Number(st[2]), '4xx': Number(st[3]), '5xx': Number(st[4]) },
        loadCpu: t.length >= 4 ? (t[2] + t[3]) / secs : NaN,
      });
    });
  });
}
