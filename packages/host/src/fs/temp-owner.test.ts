import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stageStream, discardStaged, isTemporaryFileName } from './safe-write.js';
import { sweepTemporaryFiles } from './sweep.js';
import { namespaceTag, ownerOf, ownerPart, processAlive, writerGone } from './temp-owner.js';

// Which process wrote a temporary file, and when the start-up sweep may take it at once
// (docs/sync.md "Interrupted writes"): only when its writer provably ended on this machine.

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The id of a process that ran and has ended. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('the writer of a temporary file', () => {
  it('is named in every temporary file this process writes', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-owner-'));
    const { Readable } = await import('node:stream');
    const staged = await stageStream(dir, Readable.from(['x']), { nameHint: 'a-1-b.html' });
    const tag = namespaceTag();
    expect(ownerOf(path.basename(staged.tempPath))).toEqual(tag ? { tag, pid: process.pid } : undefined);
    await discardStaged(staged);
  });

  it('reads the tag and pid back from a name, and nothing from a name without them', () => {
    const name = (tag: string, pid: number) => `.page-1-2.html.0a1b2c3d${ownerPart(tag, pid)}1z.ack-tmp`;
    expect(ownerPart('deadbeef', 4242)).toBe('deadbeef-39u-');
    expect(ownerPart(undefined, 4242)).toBe('0-39u-');
    expect(ownerOf(name('deadbeef', 4242))).toEqual({ tag: 'deadbeef', pid: 4242 });
    expect(ownerOf(name('deadbeef', 1))).toEqual({ tag: 'deadbeef', pid: 1 });
    expect(ownerOf(`.page.html.0a1b2c3d${ownerPart(undefined, 4242)}1.ack-tmp`)).toBeUndefined();
    expect(ownerOf('.page.html.0a1b2c3d4e5f1.ack-tmp')).toBeUndefined(); // an older name: the age rule
    expect(ownerOf('.page.html.0a1b2c3ddeadbeef-0-1.ack-tmp')).toBeUndefined(); // no process 0
    expect(ownerOf('.page.html.0a1b2c3ddeadbee-2n-1.ack-tmp')).toBeUndefined(); // a tag one short
    expect(ownerOf('.page.html.0a1b2c3ddeadbeef-2n-1.ack-tmpx')).toBeUndefined();
    expect(ownerOf('.page.html.0a1b2c3ddeadbeef-zzzzzzzzzzzz-1.ack-tmp')).toBeUndefined(); // past 11 digits
  });

  it('is gone only when named with this tag, by another process, of an id no process has', () => {
    const tag = 'deadbeef';
    const name = (t: string, pid: number) => `.f.0a1b2c3d${ownerPart(t, pid)}1.ack-tmp`;
    const dead = deadPid();
    expect(processAlive(dead)).toBe(false);
    expect(processAlive(process.pid)).toBe(true);
    expect(writerGone(name(tag, dead), tag)).toBe(true);
    expect(writerGone(name(tag, process.ppid), tag)).toBe(false); // alive
    expect(writerGone(name(tag, process.pid), tag)).toBe(false); // this process (another host in it)
    expect(writerGone(name(tag, dead), tag, () => false, dead)).toBe(false);
    expect(writerGone(name('cafebabe', dead), tag)).toBe(false); // another machine or namespace
    expect(writerGone(name(tag, dead), undefined)).toBe(false); // this machine unknown
    expect(writerGone('.f.0a1b2c3d4e5f1.ack-tmp', tag, () => false)).toBe(false);
  });

  it('has a tag of 8 hex on Linux, the same for every read, from the boot id and pid namespace', () => {
    expect(
      namespaceTag(
        () => 'boot-1\n',
        () => 'pid:[1]',
      ),
    ).toMatch(/^[0-9a-f]{8}$/);
    expect(
      namespaceTag(
        () => 'boot-1',
        () => 'pid:[1]',
      ),
    ).toBe(
      namespaceTag(
        () => 'boot-1\n',
        () => 'pid:[1]',
      ),
    );
    expect(
      namespaceTag(
        () => 'boot-1',
        () => 'pid:[2]',
      ),
    ).not.toBe(
      namespaceTag(
        () => 'boot-1',
        () => 'pid:[1]',
      ),
    );
    expect(
      namespaceTag(
        () => 'boot-2',
        () => 'pid:[1]',
      ),
    ).not.toBe(
      namespaceTag(
        () => 'boot-1',
        () => 'pid:[1]',
      ),
    );
    expect(
      namespaceTag(
        () => '',
        () => 'pid:[1]',
      ),
    ).toBeUndefined();
    expect(
      namespaceTag(
        () => 'boot',
        () => '',
      ),
    ).toBeUndefined();
    expect(
      namespaceTag(
        () => {
          throw new Error('no /proc');
        },
        () => 'pid:[1]',
      ),
    ).toBeUndefined();
    if (process.platform === 'linux') expect(namespaceTag()).toMatch(/^[0-9a-f]{8}$/);
  });

  it('lets the sweep take a dead writer file at once, whatever its age, and leave a live one', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-owner-'));
    const tag = namespaceTag();
    if (!tag) return; // not Linux: the age rule alone (the sweep test covers it)
    const dead = path.join(dir, `.page.html.0a1b2c3d${ownerPart(tag, deadPid())}7.ack-tmp`);
    const live = path.join(dir, `.page.html.0a1b2c3d${ownerPart(tag, process.ppid)}7.ack-tmp`);
    const mine = path.join(dir, `.page.html.0a1b2c3d${ownerPart(tag, process.pid)}7.ack-tmp`);
    const elsewhere = path.join(
      dir,
      `.page.html.0a1b2c3d${ownerPart(tag === 'deadbeef' ? 'cafebabe' : 'deadbeef', deadPid())}7.ack-tmp`,
    );
    for (const f of [dead, live, mine, elsewhere]) fs.writeFileSync(f, 'half');
    expect(await sweepTemporaryFiles(dir)).toEqual([dead]);
    expect(fs.readdirSync(dir).filter(isTemporaryFileName).sort()).toEqual(
      [live, mine, elsewhere].map((f) => path.basename(f)).sort(),
    );
  });
});
