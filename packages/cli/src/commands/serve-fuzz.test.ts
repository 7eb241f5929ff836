import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `pnpm fuzz:serve` (bench/fuzz-serve.mjs) on a small budget, so the script that produces the
// figures in docs/reliability.md keeps working: a real `ack serve` takes generated broken uploads
// and broken request heads, stays up, answers no 5xx, leaves every request answered or closed, no
// temporary file, and stops on SIGTERM with stalled uploads in flight (exit 0).

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('ack serve under generated broken requests', () => {
  it('survives them all and stops cleanly', async () => {
    const child = spawn(process.execPath, [path.join(repo, 'bench/fuzz-serve.mjs')], {
      env: {
        ...process.env,
        FUZZ_UPLOADS: process.env.ACK_FUZZ_RUNS ?? '400',
        FUZZ_HEADS: process.env.ACK_FUZZ_RUNS ?? '400',
        FUZZ_SEED: process.env.ACK_FUZZ_SEED ?? '20261124',
        FUZZ_TIME_LIMIT: '120',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, err || out).toBe(0);
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as {
      alive: boolean;
      fiveXX: number;
      unanswered: number;
      temporaryFiles: number;
      uploads: number;
      heads: number;
      stop: { code: number | null; temporaryFilesAfter: number };
    };
    expect(result).toMatchObject({ alive: true, fiveXX: 0, unanswered: 0, temporaryFiles: 0 });
    expect(result.uploads).toBeGreaterThan(0);
    expect(result.heads).toBeGreaterThan(0);
    expect(result.stop).toMatchObject({ code: 0, temporaryFilesAfter: 0 });
  }, 150_000);
});
