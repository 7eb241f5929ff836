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

/** A key file holds at least this many base64url characters (32 random bytes make 43). */
const KEY_TEXT_MIN = 32;
/** How long a key file another process is still writing (an older host's) is waited for. */
const PARTIAL_KEY_WAIT_MS = 2_000;

/**
 * The key file's key, the file created on first start. Several processes start at once (the
 * workers of `ack serve --workers`, hosts sharing a folder): exactly one creates the file and every
 * one uses its key. The file appears whole: it is written under a temporary name, then hard-linked
 * to its name, which fails when one is there already. (Created in place with `wx`, it was there
 * empty for a moment, and a process reading it then took an empty key: cookies signed by one
 * worker failed on another.) A file that is too short is read again for a moment, then refused.
 */
function readOrCreateKeyFile(keyFile: string): Buffer {
  const existing = readKeyFile(keyFile);
  if (existing) return existing;
  fs.mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o700 });
  const key = crypto.randomBytes(32);
  const text = `${key.toString('base64url')}\n`;
  const temp = `${keyFile}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temp, keyFile);
    return key;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return waitForKeyFile(keyFile);
    // A file system without hard links: created in place, as before, and waited for if it lost.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    try {
      fs.writeFileSync(keyFile, text, { mode: 0o600, flag: 'wx' });
      return key;
    } catch (inPlace) {
      if ((inPlace as NodeJS.ErrnoException).code !== 'EEXIST') throw inPlace;
      return waitForKeyFile(keyFile);
    }
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** The key in the file, or undefined when there is no file or it holds too little (yet). */
function readKeyFile(keyFile: string): Buffer | undefined {
  try {
    const text = fs.readFileSync(keyFile, 'utf8').trim();
    return text.length >= KEY_TEXT_MIN ? Buffer.from(text, 'base64url') : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return undefined;
  }
}

/** Another process made the key file: its key, once the file holds one (start-up, so a short blocking wait). */
function waitForKeyFile(keyFile: string): Buffer {
  const until = Date.now() + PARTIAL_KEY_WAIT_MS;
  for (;;) {
    const key = readKeyFile(keyFile);
    if (key) return key;
    if (Date.now() >= until)
      throw new Error(`${keyFile} holds no key (empty or cut short): remove it to have a new one made`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
}
