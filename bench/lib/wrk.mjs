// Runs wrk (one thread, pinned to CPU 1) against one URL or a cycle of paths, and reads its own
// CPU time from the shell's `times` after it exits, so a reader can see it was not the bottleneck.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pinned } from './cpu.mjs';

export const CONNECTIONS = 64;

export function wrkVersion() {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (r.error) return undefined;
  return (`${r.stdout}${r.stderr}`.split('\n')[0] ?? '').replace(/\s*Copyright.*$/, '').trim();
}

// wrk's Lua hooks: cycle through a list of paths (the tree, the screen), and print the summary
// as one JSON line at the end (requests, bytes, errors incl. non-2xx/3xx answers).
const SUMMARY = `
done = function(summary, latency, requests)
  io.write(string.format('{"requests":%d,"bytes":%d,"duration":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p99":%d}\\n',
    summary.requests, summary.bytes, summary.duration, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.status, summary.errors.timeout, latency:percentile(99)))
end
`;

export function writeScripts(dir, lists) {
  fs.mkdirSync(dir, { recursive: true });
  const scripts = { plain: path.join(dir, 'plain.lua') };
  fs.writeFileSync(scripts.plain, SUMMARY);
  for (const [name, paths] of Object.entries(lists)) {
    const file = path.join(dir, `${name}.lua`);
    fs.writeFileSync(
      file,
      `local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, paths[(n % #paths) + 1])
end
${SUMMARY}`,
    );
    scripts[name] = file;
  }
  return scripts;
}

/** One measurement: `{ rps, mbps, p99Ms, errors, wrongStatus, wrkCpu }` (wrkCpu: share of one core). */
export function wrk({ url, seconds, script, headers = {} }) {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const quoted = ['wrk', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const [cmd, ...rest] = pinned(1, ['bash', '-c', `${quoted}; times`]);
    const child = spawn(cmd, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('error', reject);
    child.once('exit', () => {
      const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
      if (!line) return reject(new Error(`wrk gave no summary: ${err || out}`));
      const s = JSON.parse(line);
      // `times` prints the shell's own and then its children's user and system time.
      const t = [...out.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      const wrkCpu = t.length >= 4 ? (t[2] + t[3]) / (s.duration / 1e6) : NaN;
      const secs = s.duration / 1e6;
      resolve({
        rps: s.requests / secs,
        mbps: s.bytes / secs / 1e6,
        p99Ms: s.p99 / 1000,
        errors: s.connect + s.read + s.write + s.timeout,
        wrongStatus: s.status,
        requests: s.requests,
        wrkCpu,
      });
    });
  });
}
