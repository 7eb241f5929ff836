import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Keys for signing cookies and tokens. One master key, from `Security:SigningKey` or a key file
 * created on first start (mode 0600, never a constant in code); each purpose gets its own key
 * derived with HKDF so that a value signed for one purpose never verifies for another. Every
 * process of a deployment must share the master key (docs/scale-out.md). Rotation
 * (docs/sessions.md): the current key signs; `Security:PreviousSigningKeys` still verify until
 * their `ValidUntil`.
 */
export interface PreviousKey {
  Key: string;
  /** ISO date-time after which the key no longer verifies anything. */
  ValidUntil: string;
}

export interface Keyring {
  /** A 32-byte key for the named purpose (`session`, `auth-cookie`, `antiforgery`, ...): it signs. */
  key(purpose: string): Buffer;
  /** The current key, then the previous keys still valid at `now`: any of them verifies. */
  keys(purpose: string, now?: number): Buffer[];
  /** Where the master key came from, for the start-up log (never the key itself). */
  readonly source: 'setting' | 'file';
}

export function createKeyring(configuredKey: string, keyFile: string, previous: readonly PreviousKey[] = []): Keyring {
  let master: Buffer;
  let source: Keyring['source'];
  if (configuredKey.trim() !== '') {
    master = Buffer.from(configuredKey, 'utf8');
    source = 'setting';
  } else {
    master = readOrCreateKeyFile(keyFile);
    source = 'file';
  }
  const derive = (from: Buffer, purpose: string) =>
    Buffer.from(crypto.hkdfSync('sha256', from, Buffer.alloc(0), `ack:${purpose}`, 32));
  const cache = new Map<string, Buffer>();
  const key = (purpose: string) => {
    let k = cache.get(purpose);
    if (!k) {
      k = derive(master, purpose);
      cache.set(purpose, k);
    }
    return k;
  };
  // `file:<content of signing.key>` names a key that came from the key file (base64url bytes).
  const older = previous.map((p) => ({
    master: p.Key.startsWith('file:') ? Buffer.from(p.Key.slice(5).trim(), 'base64url') : Buffer.from(p.Key, 'utf8'),
    until: Date.parse(p.ValidUntil),
    // Derived once per purpose: `keys` runs for every signed-in request.
    derived: new Map<string, Buffer>(),
  }));
  const olderKey = (o: (typeof older)[number], purpose: string) => {
    let k = o.derived.get(purpose);
    if (!k) {
      k = derive(o.master, purpose);
      o.derived.set(purpose, k);
    }
    return k;
  };
  return {
    source,
    key,
    keys(purpose, now = Date.now()) {
      return [key(purpose), ...older.filter((o) => o.until > now).map((o) => olderKey(o, purpose))];
    },
  };
}

function readOrCreateKeyFile(keyFile: string): Buffer {
  try {
    const text = fs.readFileSync(keyFile, 'utf8').trim();
    if (text.length >= 32) return Buffer.from(text, 'base64url');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o700 });
  const key = crypto.randomBytes(32);
  // `wx`: if two hosts start at once, the second reads the first one's key instead of replacing it.
  try {
    fs.writeFileSync(keyFile, key.toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'base64url');
  }
}
