// The sign-out list when several hosts share one session store (docs/dev-sign-in.md "Sign-out
// holds"), in process: the store is the real SharedSessionStore over a Map that every list here
// shares, as hosts share a database. What Redis or SQL do with the rows is tested against them in
// sign-in.test.ts and sign-out-shared.test.ts; here it is what the list asks and keeps.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../logging/logger.js';
import { SharedSessionStore } from '../session/store-base.js';
import { recordOf } from './revocation-file.js';
import { createRevocationList, REVOKED_KEY_PREFIX } from './revocations.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {}, verbose() {}, fatal() {} } as unknown as Logger;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One database: rows with an expiry, as every shared store keeps them. */
class MapStore extends SharedSessionStore {
  readonly rows = new Map<string, { json: string; expires: number }>();
  readonly removed: string[] = [];
  /** What the store held when each remove came (to check the order of a sign-out's steps). */
  onRemove: (sid: string) => void = () => {};
  failReads = false;
  constructor() {
    super('Map', 'memory', 60_000, quiet);
  }
  protected async prepare() {}
  protected async read(sid: string, now: number) {
    if (this.failReads) throw new Error('store down');
    const row = this.rows.get(sid);
    return row && row.expires > now ? row.json : undefined;
  }
  protected async write(sid: string, json: string, expires: number) {
    this.rows.set(sid, { json, expires });
  }
  protected async extend() {}
  protected async remove(sid: string) {
    this.onRemove(sid);
    this.removed.push(sid);
    this.rows.delete(sid);
  }
  async cleanup() {
    return 0;
  }
  async shutdown() {}
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('the sign-out list on hosts sharing a session store', () => {
  it('refuses on every host a cookie signed out on one, until its expiry', async () => {
    const store = new MapStore();
    const a = createRevocationList({ sharedStore: store });
    const b = createRevocationList({ sharedStore: store });
    await a.revoke('tok', Date.now() + 200);
    expect(await b.isRevoked('tok')).toBe(true);
    expect(await b.isRevoked('tok2')).toBe(false);
    // Kept by b once found: a store row lost later does not bring the cookie back.
    store.rows.clear();
    expect(await b.isRevoked('tok')).toBe(true);
    await pause(300);
    expect(await b.isRevoked('tok')).toBe(false);
    expect(await createRevocationList({ sharedStore: store }).isRevoked('tok')).toBe(false);
  });

  it('writes the record under the reserved prefix with the cookie expiry, and never one already expired', async () => {
    const store = new MapStore();
    const list = createRevocationList({ sharedStore: store });
    const until = Date.now() + 60_000;
    await list.revoke('tok', until);
    await list.revoke('old', Date.now() - 1);
    expect([...store.rows.keys()]).toEqual([`${REVOKED_KEY_PREFIX}tok`]);
    const row = store.rows.get(`${REVOKED_KEY_PREFIX}tok`)!;
    expect(row.expires).toBe(until);
    expect(JSON.parse(row.json)).toEqual({ revoked: true, until });
  });

  it('records the sign-out before it destroys the session, and destroys only the one named', async () => {
    const store = new MapStore();
    await store.setUntil('sess', { user: 'u' }, Date.now() + 60_000);
    await store.setUntil('other', { user: 'v' }, Date.now() + 60_000);
    const other = createRevocationList({ sharedStore: store });
    let refusedWhenRemoved: boolean | undefined;
    store.onRemove = () => {
      void other.isRevoked('tok').then((v) => (refusedWhenRemoved = v));
    };
    const list = createRevocationList({ sharedStore: store });
    await list.revoke('tok', Date.now() + 60_000, 'sess');
    await pause(10);
    expect(refusedWhenRemoved).toBe(true);
    expect(store.removed).toEqual(['sess']);
    expect(store.rows.has('other')).toBe(true);
    // Without a session id nothing is destroyed.
    await list.revoke('tok3', Date.now() + 60_000);
    expect(store.removed).toEqual(['sess']);
  });

  it('does not ask the store when the request session proves no completed sign-out', async () => {
    const store = new MapStore();
    await createRevocationList({ sharedStore: store }).revoke('tok', Date.now() + 60_000);
    const b = createRevocationList({ sharedStore: store });
    store.failReads = true;
    expect(await b.isRevoked('tok', true)).toBe(false);
    // Asked without that proof, the store is asked, and its failure is not taken as "not signed out".
    await expect(b.isRevoked('tok')).rejects.toThrow();
    store.failReads = false;
    expect(await b.isRevoked('tok')).toBe(true);
    // Once known here, the proof does not override what this process knows.
    expect(await b.isRevoked('tok', true)).toBe(true);
  });

  it('takes only a well-formed, unexpired record of the store as a sign-out', async () => {
    const store = new MapStore();
    const list = createRevocationList({ sharedStore: store });
    const later = Date.now() + 60_000;
    const put = (id: string, data: object) => store.setUntil(REVOKED_KEY_PREFIX + id, data, later);
    await put('good', { revoked: true, until: later });
    await put('flag', { revoked: 'yes', until: later });
    await put('false', { revoked: false, until: later });
    await put('until', { revoked: true, until: String(later) });
    await put('none', { revoked: true });
    await put('past', { revoked: true, until: Date.now() - 1 });
    await put('now', { revoked: true, until: Date.now() });
    expect(await list.isRevoked('good')).toBe(true);
    for (const id of ['flag', 'false', 'until', 'none', 'past', 'now', 'missing']) {
      expect(await list.isRevoked(id), id).toBe(false);
    }
    // A session row of that id (no prefix) is not a sign-out.
    await store.setUntil('plain', { revoked: true, until: later }, later);
    expect(await list.isRevoked('plain')).toBe(false);
  });

  it('takes a record of the store as expired from its instant on, as the cookie is (fixed clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = Date.UTC(2026, 10, 29, 12);
      vi.setSystemTime(now);
      const store = new MapStore();
      const list = createRevocationList({ sharedStore: store });
      for (const [id, until] of [
        ['at-expiry', now],
        ['a-millisecond-after', now + 1],
      ] as const) {
        await store.setUntil(REVOKED_KEY_PREFIX + id, { revoked: true, until }, now + 60_000);
      }
      expect(await list.isRevoked('at-expiry')).toBe(false);
      expect(await list.isRevoked('a-millisecond-after')).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts a sign-out found in the store towards the bound on sign-ins', async () => {
    const store = new MapStore();
    await createRevocationList({ sharedStore: store }).revoke('tok', Date.now() + 60_000);
    const list = createRevocationList({ sharedStore: store, maxEntries: 1 });
    expect(list.acceptsSignIns()).toBe(true);
    await list.isRevoked('tok');
    expect(list.acceptsSignIns()).toBe(false);
  });

  it('reads the file before the store, and with the proof of a session still reads the file without a store', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-revocations-hosts-'));
    dirs.push(dir);
    const file = path.join(dir, 'sign-outs');
    fs.writeFileSync(file, recordOf('filed', Date.now() + 60_000));
    const store = new MapStore();
    store.failReads = true;
    expect(await createRevocationList({ file, sharedStore: store }).isRevoked('filed')).toBe(true);
    expect(await createRevocationList({ file }).isRevoked('filed', true)).toBe(true);
  });
});

describe('the sign-out list reporting its file', () => {
  function recorder(lines: string[]): Logger {
    const log = (text: string) => lines.push(text);
    return { error: log, warn: log, info: log, debug: log, verbose: log, fatal: log } as unknown as Logger;
  }

  it('says a failure again after the file worked in between, naming the file and the cause', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-revocations-hosts-'));
    dirs.push(dir);
    const folder = path.join(dir, 'home');
    const file = path.join(folder, 'sign-outs');
    fs.writeFileSync(folder, ''); // a file where the folder should be
    const lines: string[] = [];
    const list = createRevocationList({ file, logger: recorder(lines) });
    await list.loaded();
    await list.revoke('a', Date.now() + 60_000);
    expect(lines).toEqual([
      `sign-out file ${file}: reading failed (ENOTDIR); sign-outs are kept in this process only`,
      // mkdir refuses a path through a file as existing.
      `sign-out file ${file}: writing failed (EEXIST); sign-outs are kept in this process only`,
    ]);
    fs.rmSync(folder);
    await list.revoke('b', Date.now() + 60_000); // works: makes the folder
    expect(await list.isRevoked('zzz')).toBe(false); // reads
    expect(fs.readFileSync(file, 'utf8')).toContain('"b"');
    fs.rmSync(folder, { recursive: true });
    fs.writeFileSync(folder, '');
    await list.revoke('c', Date.now() + 60_000);
    expect(await list.isRevoked('zzz')).toBe(false);
    expect(lines).toHaveLength(4);
    expect(await list.isRevoked('a')).toBe(true);
    expect(await list.isRevoked('c')).toBe(true);
  });

  it('keeps sign-outs in the process without a logger when the file fails, and says nothing without a file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-revocations-hosts-'));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, 'home'), '');
    const quietList = createRevocationList({ file: path.join(dir, 'home', 'sign-outs') });
    await quietList.revoke('a', Date.now() + 60_000);
    expect(await quietList.isRevoked('a')).toBe(true);
    expect(await quietList.isRevoked('b')).toBe(false);
    const lines: string[] = [];
    const noFile = createRevocationList({ logger: recorder(lines) });
    await noFile.loaded();
    await noFile.revoke('a', Date.now() + 60_000);
    expect(await noFile.isRevoked('b')).toBe(false);
    expect(lines).toEqual([]);
  });
});

describe('the sign-out list and its bounds', () => {
  it('does not count an expired sign-out heard from another worker towards the bound', () => {
    const list = createRevocationList({ maxEntries: 1 });
    list.heard('old', Date.now() - 1);
    list.heard('now', Date.now());
    expect(list.acceptsSignIns()).toBe(true);
    list.heard('live', Date.now() + 60_000);
    expect(list.acceptsSignIns()).toBe(false);
  });

  it('compacts its file once expired records outnumber the live ones it keeps', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-revocations-hosts-'));
    dirs.push(dir);
    const file = path.join(dir, 'sign-outs');
    const past = Date.now() - 1000;
    fs.writeFileSync(file, Array.from({ length: 10 }, (_, i) => recordOf(`old${i}`, past)).join(''));
    const list = createRevocationList({ file, fileOptions: { compactAfter: 4 } });
    await list.loaded();
    await list.revoke('new', Date.now() + 60_000);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('old');
    expect(await createRevocationList({ file }).isRevoked('new')).toBe(true);
  });
});
