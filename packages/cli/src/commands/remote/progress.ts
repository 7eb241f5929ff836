/**
 * A one-line progress bar on a terminal; nothing at all otherwise (pipes, CI logs, `--json`).
 */
export interface Progress {
  tick(): void;
  done(): void;
}

export function createProgress(total: number, enabled: boolean, out: NodeJS.WriteStream = process.stderr): Progress {
  if (!enabled || total < 2) return { tick() {}, done() {} };
  let count = 0;
  const width = 30;
  const draw = () => {
    const filled = Math.round((count / total) * width);
    out.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${count}/${total}`);
  };
  draw();
  return {
    tick() {
      count++;
      draw();
    },
    done() {
      out.write('\r\x1b[K');
    },
  };
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
