import { describe, expect, it } from 'vitest';
import { runAck } from '../test-support/spawn-ack.js';

/** A command given bad usage exits 2 with one line on stderr: no help dump, no stack trace. */
describe('usage errors', () => {
  it('a missing option, a bad option value or an unknown command: exit 2, one `ack:` line', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['sync', 'upload'], /required option '--module <name>' not specified/],
      [['sync', 'refresh', '--module', 'wwwroot', '--path', 'x', '--change', 'Bogus'], /argument 'Bogus' is invalid/],
      [['serve', '--port', 'abc'], /port number/],
      [['contract-sync'], /required option/],
      [['no-such-command'], /unknown command 'no-such-command'/],
    ];
    for (const [args, message] of cases) {
      const run = await runAck(args, { env: { ACK_SYNC_TOKEN: '', ACK_HOST_ACCESS_ID: '' } });
      expect(run.code, args.join(' ')).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(/^ack: /);
      expect(lines[0]).toMatch(message);
      expect(run.stdout).toBe('');
    }
  });
});
