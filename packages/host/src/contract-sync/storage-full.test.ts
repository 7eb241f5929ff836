import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mountTinyFilesystem, testAppSettings, useTestHosts } from '../test-support/index.js';
import { isTemporaryFileName } from '../fs/safe-write.js';

const KEY = 'team-host-key';
const hosts = useTestHosts();
const unmounts: Array<() => void> = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

describe('contract sync on a full disk', () => {
  it('answers 507 storage.full, keeps both old files and leaves no temporary file', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { UseContractSync: true, HostAccessID: KEY } }), {
      'modules/HDS/Contracts/transact/HDS/old.json': 'old module copy',
    });
    // The second target lives on a 64 KiB file system: the first target has room, the second not.
    const shared = path.join(home.home, 'contracts', 'transact');
    unmounts.push(mountTinyFilesystem(shared, 64 * 1024));
    fs.mkdirSync(path.join(shared, 'HDS'));
    fs.writeFileSync(path.join(shared, 'HDS', 'old.json'), 'old shared copy');
    const { url } = await hosts.start(home);

    const send = (content: Buffer) => {
      const body = new FormData();
      for (const [k, v] of Object.entries({
        moduleID: 'HDS',
        contractType: 'transact',
        destFilePath: 'HDS/old.json',
        changeType: 'Changed',
      }))
        body.append(k, v);
      body.append('file', new Blob([content]), 'old.json');
      return fetch(`${url}/contractsync`, {
        method: 'POST',
        body,
        headers: { hostAccessID: createHash('sha256').update(KEY).digest('hex') },
      });
    };
    const full = await send(Buffer.alloc(200 * 1024, 0x61));
    expect(full.status).toBe(507);
    expect(await full.json()).toMatchObject({ status: 507, code: 'storage.full' });
    expect(fs.readFileSync(path.join(home.home, 'modules/HDS/Contracts/transact/HDS/old.json'), 'utf8')).toBe(
      'old module copy',
    );
    expect(fs.readFileSync(path.join(shared, 'HDS', 'old.json'), 'utf8')).toBe('old shared copy');
    const temps = (fs.readdirSync(home.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
      isTemporaryFileName(path.basename(f)),
    );
    expect(temps).toEqual([]);

    // A file that fits still goes to both.
    expect((await send(Buffer.from('{"fits":true}'))).status).toBe(200);
    expect(fs.readFileSync(path.join(shared, 'HDS', 'old.json'), 'utf8')).toBe('{"fits":true}');
  });
});
