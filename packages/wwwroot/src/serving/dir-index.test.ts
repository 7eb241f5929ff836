import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDirectoryIndex, RACY_WINDOW_MS } from './dir-index.js';
import { createFreshness, type Freshness } from './freshness.js';

// A case-insensitive URL remembered by the folder handler is re-checked on every request with
// `unchanged` for each folder whose listing chose the name: while the folder watch saw nothing,
// with no system call (docs/static-files.md, "A changed file").

let dir: string;
let freshness: Freshness;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-dir-index-'));
  fs.mkdirSync(path.join(dir, 'www/Mixed'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'www/Mixed/CaseFile.txt'), 'x');
  // Older than the racy window, so the listing is trusted once read.
  await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 20));
  freshness = createFreshness();
});
afterEach(() => {
  vi.restoreAllMocks();
  freshness.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  return check();
};

describe('directory index', () => {
  it('after a change in a folder above, confirms a listing by one stat and trusts it again without one', async () => {
    const www = path.join(dir, 'www');
    const dirs = createDirectoryIndex(undefined, freshness);
    const picked = dirs.pick(www, 'mixed')!;
    expect(picked.name).toBe('Mixed');
    const stamp = freshness.stamp(www)!;
    expect(dirs.unchanged(www, picked.mtimeMs)).toBe(true);

    // Something unrelated written beside the served folder: the watch of the folder above moves.
    fs.writeFileSync(path.join(dir, 'unrelated.log'), 'log line');
    expect(await until(() => !freshness.unchanged(stamp))).toBe(true);

    const stat = vi.spyOn(fs, 'statSync');
    expect(dirs.unchanged(www, picked.mtimeMs)).toBe(true);
    expect(stat).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 5; i++) expect(dirs.unchanged(www, picked.mtimeMs)).toBe(true);
    expect(stat).toHaveBeenCalledTimes(1);
  });

  it('still refuses a listing whose folder changed: a name added or removed inside it', async () => {
    const www = path.join(dir, 'www');
    const dirs = createDirectoryIndex(undefined, freshness);
    const picked = dirs.pick(www, 'MIXED')!;
    expect(dirs.unchanged(www, picked.mtimeMs)).toBe(true);
    const stamp = freshness.stamp(www)!;
    fs.mkdirSync(path.join(www, 'mixed'));
    expect(await until(() => !freshness.unchanged(stamp))).toBe(true);
    expect(dirs.unchanged(www, picked.mtimeMs)).toBe(false);
    // And again: a refused listing is not stamped as current.
    expect(dirs.unchanged(www, picked.mtimeMs)).toBe(false);
  });
});
