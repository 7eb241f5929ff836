import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * A private `redis-server` on `port` (no persistence), for tests that stop and start "the database"
 * while a host runs, which the shared services other runs use must never be. Resolves once it
 * accepts connections; `stop()` kills it and waits for its exit.
 */
export async function startRedisServer(
  port: number,
  password?: string,
): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  if (password) args.push('--requirepass', password);
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
