import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeyring } from './keyring.js';

// The key file made at first start (docs/scale-out.md): processes starting at once (the workers of
// `ack serve --workers`) must all sign with the one key the file holds.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const keyFileIn = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-keyring-'));
  dirs.push(dir);
  return path.join(dir, '.ack', 'signing.key');
};
const derived = (master: Buffer) =>
  Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), 'ack:auth-cookie', 32));

/** The built keyring, as a separate process loads it (the tests run after the build). */
const BUILT = new URL('../../dist/keys/keyring.js', import.meta.url).href;

describe('the signing key file', () => {
  it('is made once, whole, and read back by the next start', () => {
    const keyFile = keyFileIn();
    const first = createKeyring('', keyFile);
    const text = fs.readFileSync(keyFile, 'utf8').trim();
    expect(text).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.key('auth-cookie')).toEqual(derived(Buffer.from(text, 'base64url')));
    expect(createKeyring('', keyFile).key('auth-cookie')).toEqual(first.key('auth-cookie'));
    expect((fs.statSync(keyFile).mode & 0o777).toString(8)).toBe('600');
    // No temporary file is left beside it.
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(['signing.key']);
  });

  it('waits for a key file another process has created and not yet written, and takes its key', async () => {
    const keyFile = keyFileIn();
    fs.mkdirSync(path.dirname(keyFile), { recursive: true });
    // What a host that created the file in place shows for a moment: the file, empty.
    fs.writeFileSync(keyFile, '', { mode: 0o600 });
    const theirs = crypto.randomBytes(32).toString('base64url');
    const writer = spawn('sh', ['-c', `sleep 0.3; printf '%s\\n' '${theirs}' > '${keyFile}'`]);
    const done = new Promise((resolve) => writer.once('exit', resolve));
    const mine = createKeyring('', keyFile);
    await done;
    expect(mine.key('auth-cookie')).toEqual(derived(Buffer.from(theirs, 'base64url')));
  });

  it('refuses a key file that stays too short, naming it, rather than sign with what it holds', () => {
    const keyFile = keyFileIn();
    fs.mkdirSync(path.dirname(keyFile), { recursive: true });
    // The neighbour that must still be refused: one character short of a key.
    fs.writeFileSync(keyFile, 'a'.repeat(31), { mode: 0o600 });
    expect(() => createKeyring('', keyFile)).toThrow(`${keyFile} holds no key (empty or cut short)`);
    fs.writeFileSync(keyFile, 'a'.repeat(32), { mode: 0o600 });
    expect(createKeyring('', keyFile).key('auth-cookie')).toEqual(derived(Buffer.from('a'.repeat(32), 'base64url')));
  });

  it('gives processes starting at once the same key', async () => {
    for (let round = 0; round < 5; round++) {
      const keyFile = keyFileIn();
      const script = `import(${JSON.stringify(BUILT)}).then((m) => process.stdout.write(m.createKeyring('', ${JSON.stringify(keyFile)}).key('auth-cookie').toString('hex')))`;
      const keys = await Promise.all(
        Array.from(
          { length: 6 },
          () =>
            new Promise<string>((resolve, reject) =>
              execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 }, (err, out) =>
                err ? reject(err) : resolve(out),
              ),
            ),
        ),
      );
      const text = fs.readFileSync(keyFile, 'utf8').trim();
      expect(new Set(keys)).toEqual(new Set([derived(Buffer.from(text, 'base64url')).toString('hex')]));
    }
  });
});
