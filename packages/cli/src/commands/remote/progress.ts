/**
 * A one-line progress display on a terminal: files, bytes, rate and time left. Nothing at all
 * otherwise (pipes, CI logs, `--json`), so piped output stays one line per file.
 */
export interface Progress {
  /** One file done, of `bytes` bytes. */
  tick(bytes?: number): void;
  done(): void;
}

export function createProgress(
  totalFiles: number,
  totalBytes: number,
  enabled: boolean,
  out: NodeJS.WriteStream = process.stderr,
  now: () => number = Date.now,
): Progress {
  if (!enabled) return { tick() {}, done() {} };
  const started = now();
  let files = 0;
  let bytes = 0;
  const width = 20;
  const draw = () => {
    const share = totalBytes > 0 ? bytes / totalBytes : totalFiles > 0 ? files / totalFiles : 1;
    const filled = Math.min(width, Math.round(share * width));
    const seconds = (now() - started) / 1000;
    const rate = seconds > 0 ? bytes / seconds : 0;
    const left = rate > 0 ? Math.max(0, (totalBytes - bytes) / rate) : undefined;
    const parts = [
      `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`,
      `${files}/${totalFiles} files`,
      `${formatBytes(bytes)} of ${formatBytes(totalBytes)}`,
      `${formatBytes(rate)}/s`,
      left === undefined ? 'time left: -' : `${formatDuration(left)} left`,
    ];
    out.write(`\r${parts.join('  ')}\x1b[K`);
  };
  draw();
  return {
    tick(size = 0) {
      files++;
      bytes += size;
      draw();
    },
    done() {
      out.write('\r\x1b[K');
    },
  };
}

/** `512 B`, `1.5 KB`, `12.0 MB` (1024-based, as file managers show sizes). */
/** `1 file`, `2 files`. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `4 s`, `2 min 5 s`, `1 h 3 min`. */
export function formatDuration(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Runs `tasks` with at most `limit` at once. */
export async function runLimited<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}
