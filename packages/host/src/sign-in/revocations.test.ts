// The sign-out list of one process (docs/dev-sign-in.md "Sign-out holds"): what it keeps, for how
// long, what it reads from the shared file, and what it says when the file fails.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../logging/logger.js';
import { recordOf } from './revocation-file.js';
import { createRevocationList } from './revocations.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-revocations-'));
  dirs.push(dir);
  return dir;
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recordingLogger(lines: string[]): Logger {
  const log = (text: string) => lines.push(text);
  const logger = { error: log, warn: log, info: log, debug: log, verbose: log, fatal: log } as unknown as Logger;
  return logger;
}

describe('the sign-out list', () => {
  it('refuses a signed-out id until its expiry, and never one already expired', async () => {
    const list = createRevocationList();
    await list.revoke('soon', Date.now() + 150);
    await list.revoke('past', Date.now() - 1);
    await list.revoke('now', Date.now());
    expect(await list.isRevoked('soon')).toBe(true);
    expect(await list.isRevoked('past')).toBe(false);
    expect(await list.isRevoked('now')).toBe(false);
    expect(await list.isRevoked('other')).toBe(false);
    await pause(300);
    expect(await list.isRevoked('soon')).toBe(false);
  });

  it('keeps the latest expiry of an id signed out twice, whatever the order', async () => {
    const list = createRevocationList();
    await list.revoke('a', Date.now() + 60_000);
    list.heard('a', Date.now() + 150);
    list.heard('b', Date.now() + 150);
    list.heard('b', Date.now() + 60_000);
    await pause(300);
    expect(await list.isRevoked('a')).toBe(true);
    expect(await list.isRevoked('b')).toBe(true);
  });

  it('announces a sign-out to the other workers, and not one already expired', async () => {
    const announced: Array<[string, number]> = [];
    const list = createRevocationList({ announce: (id, exp) => announced.push([id, exp]) });
    const until = Date.now() + 60_000;
    await list.revoke('x', until);
    await list.revoke('y', Date.now() - 1);
    expect(announced).toEqual([['x', until]]);
  });

  it('counts the expiry instant as expired, as the cookie itself does: nothing kept or announced at it, nothing refused from it on', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = Date.UTC(2026, 10, 29, 12);
      vi.setSystemTime(now);
      const announced: string[] = [];
      const list = createRevocationList({ announce: (id) => announced.push(id) });
      await list.revoke('at-expiry', now);
      await list.revoke('a-millisecond-before', now + 1);
      expect(announced).toEqual(['a-millisecond-before']);
      expect(await list.isRevoked('at-expiry')).toBe(false);
      expect(await list.isRevoked('a-millisecond-before')).toBe(true);
      vi.setSystemTime(now + 1);
      expect(await list.isRevoked('a-millisecond-before')).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('accepts sign-ins again once sign-outs past the bound expire', async () => {
    const list = createRevocationList({ maxEntries: 2 });
    await list.revoke('a', Date.now() + 150);
    expect(list.acceptsSignIns()).toBe(true);
    await list.revoke('b', Date.now() + 150);
    expect(list.acceptsSignIns()).toBe(false);
    await pause(300);
    // An expired id is dropped when it is asked for.
    expect(await list.isRevoked('a')).toBe(false);
    expect(await list.isRevoked('b')).toBe(false);
    expect(list.acceptsSignIns()).toBe(true);
  });

  it('drops expired ids in sweeps as the list grows, and keeps every live one', async () => {
    const list = createRevocationList({ maxEntries: 40_000 });
    for (let i = 0; i < 20_000; i++) list.heard(`old${i}`, Date.now() + 100);
    await pause(200);
    for (let i = 0; i < 20_000; i++) list.heard(`new${i}`, Date.now() + 60_000);
    // The sweep runs a step per turn of the event loop.
    for (let i = 0; i < 20 && !list.acceptsSignIns(); i++) await pause(20);
    expect(list.acceptsSignIns()).toBe(true);
    for (let i = 0; i < 20_000; i += 997) expect(await list.isRevoked(`new${i}`)).toBe(true);
  });

  it('reads the file at start, and what another process appends to it', async () => {
    const file = path.join(tempDir(), '.ack', 'sign-outs');
    fs.mkdirSync(path.dirname(file));
    const until = Date.now() + 60_000;
    fs.writeFileSync(file, recordOf('before', until) + recordOf('expired', Date.now() - 1));
    const list = createRevocationList({ file, fileOptions: { chunkBytes: 8 } });
    await list.loaded();
    expect(await list.isRevoked('before')).toBe(true);
    expect(await list.isRevoked('expired')).toBe(false);
    fs.appendFileSync(file, recordOf('later', until));
    expect(await list.isRevoked('later')).toBe(true);
    // And its own sign-outs reach a process started after.
    await list.revoke('mine', until);
    const next = createRevocationList({ file });
    expect(await next.isRevoked('mine')).toBe(true);
    expect(await next.isRevoked('before')).toBe(true);
  });

  it('yields to the event loop while it reads a large file', async () => {
    const file = path.join(tempDir(), 'sign-outs');
    const until = Date.now() + 60_000;
    fs.writeFileSync(file, Array.from({ length: 20_000 }, (_, i) => recordOf(`id${i}`, until)).join(''));
    let turns = 0;
    let loaded = false;
    const list = createRevocationList({ file, fileOptions: { chunkBytes: 16 * 1024 } });
    const done = list.loaded().then(() => {
      loaded = true;
    });
    const tick = (): void => {
      if (loaded) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await done;
    expect(turns).toBeGreaterThan(10);
    expect(await list.isRevoked('id19999')).toBe(true);
  });

  it('says once that the file cannot be written or read, and keeps sign-outs in the process', async () => {
    const dir = tempDir();
    // A file where the folder should be: neither the folder nor the file can be made.
    fs.writeFileSync(path.join(dir, 'blocked'), '');
    const lines: string[] = [];
    const list = createRevocationList({ file: path.join(dir, 'blocked', 'sign-outs'), logger: recordingLogger(lines) });
    await list.revoke('a', Date.now() + 60_000);
    await list.revoke('b', Date.now() + 60_000);
    expect(await list.isRevoked('a')).toBe(true);
    expect(await list.isRevoked('c')).toBe(false);
    expect(await list.isRevoked('d')).toBe(false);
    expect(lines.filter((l) => l.includes('writing failed'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('reading failed'))).toHaveLength(1);
    expect(lines.join('\n')).toMatch(/ENOTDIR/);
    expect(lines.join('\n')).toContain('kept in this process only');
  });
});
