// `pnpm bench`'s check of the programs its suites drive, imported first by bench/run.mjs.
import { execFileSync } from 'node:child_process';

// The programs the suites drive, by Debian package: named in one line before anything runs.
const PROGRAMS = {
  wrk: 'wrk',
  h2load: 'nghttp2-client',
  nginx: 'nginx-light',
  caddy: 'caddy',
  taskset: 'util-linux',
  chromium: 'chromium',
};
const absent = Object.entries(PROGRAMS).filter(([program]) => {
  try {
    execFileSync('sh', ['-c', `command -v ${program} || test -x /usr/sbin/${program}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});
if (absent.length > 0) {
  console.error(
    `bench: missing ${absent.map(([p]) => p).join(', ')}: apt-get install ${[...new Set(absent.map(([, pkg]) => pkg))].join(' ')}`,
  );
  process.exit(2);
}
