import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  multipartBody,
  mountTinyFilesystem,
  testAppSettings,
  useTestHosts,
  type FormPart,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

const hosts = useTestHosts();
const unmounts: Array<() => void> = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});
const AUTH = `Basic ${Buffer.from('team-token:').toString('base64')}`;

/** A host whose screen folder is a 64 KiB file system holding the old page. */
async function startOnTinyDisk(security: Record<string, unknown> = {}) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], Security: security } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: ['team-token'] } },
  });
  const folder = path.join(home.home, 'contracts', 'wwwroot', 'HDS');
  unmounts.push(mountTinyFilesystem(folder, 64 * 1024));
  fs.writeFileSync(path.join(folder, 'page.html'), '<p>v1</p>');
  const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
  return { home, folder, url };
}

describe('sync upload on a full disk', () => {
  it('answers 507 storage.full, keeps the old file and leaves no temporary file, file part first or last', async () => {
    const { home, folder, url } = await startOnTinyDisk();

    for (const fileFirst of [false, true]) {
      const form = new FormData();
      const addFile = () => form.append('file', new Blob([Buffer.alloc(300 * 1024, 0x61)]), 'page.html');
      if (fileFirst) addFile();
      form.append('moduleName', 'wwwroot');
      form.append('changeType', 'Changed');
      form.append('filePath', 'HDS/page.html');
      if (!fileFirst) addFile();
      const res = await fetch(`${url}/wwwroot/api/sync/upload`, {
        method: 'POST',
        headers: { Authorization: AUTH },
        body: form,
      });
      expect(res.status, `file first: ${fileFirst}`).toBe(507);
      expect(await res.json()).toMatchObject({ status: 507, code: 'storage.full' });
      expect(fs.readFileSync(path.join(folder, 'page.html'), 'utf8')).toBe('<p>v1</p>');
      const temps = (fs.readdirSync(home.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
        isTemporaryFileName(path.basename(f)),
      );
      expect(temps).toEqual([]);
    }
  });

  it('answers a big PUT that does not fit 507 storage.full (written off the main thread): old file kept, nothing left', async () => {
    const { home, folder, url } = await startOnTinyDisk({ MaxContractSyncFileBytes: 16 * 1024 * 1024 });
    const res = await fetch(
      `${url}/wwwroot/api/sync/upload?moduleName=wwwroot&changeType=Changed&filePath=HDS/page.html`,
      { method: 'PUT', headers: { Authorization: AUTH }, body: Buffer.alloc(9 * 1024 * 1024, 0x62) },
    );
    expect(res.status).toBe(507);
    expect(await res.json()).toMatchObject({ status: 507, code: 'storage.full' });
    expect(fs.readFileSync(path.join(folder, 'page.html'), 'utf8')).toBe('<p>v1</p>');
    const temps = (fs.readdirSync(home.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
      isTemporaryFileName(path.basename(f)),
    );
    expect(temps).toEqual([]);
  });

  it('answers a batch that does not fit 507 storage.full: nothing of it committed, no temporary file', async () => {
    const { folder, url } = await startOnTinyDisk();
    const sends = async (count: number) => {
      const parts: FormPart[] = [{ name: 'moduleName', content: 'wwwroot' }];
      for (let i = 0; i < count; i++)
        parts.push(
          { name: 'filePath', content: i === 0 ? 'HDS/page.html' : `HDS/f${i}.html` },
          { name: 'file', content: Buffer.alloc(8 * 1024, 0x62), filename: 'f.html' },
        );
      const { body, contentType } = multipartBody(parts);
      return fetch(`${url}/wwwroot/api/sync/batch`, {
        method: 'POST',
        headers: { Authorization: AUTH, 'Content-Type': contentType },
        body,
      });
    };
    // 20 files of 8 KiB cannot fit in 64 KiB; the neighbour, 2 of them, does.
    const full = await sends(20);
    expect(full.status).toBe(507);
    expect(await full.json()).toMatchObject({ status: 507, code: 'storage.full' });
    expect(fs.readdirSync(folder)).toEqual(['page.html']);
    expect(fs.readFileSync(path.join(folder, 'page.html'), 'utf8')).toBe('<p>v1</p>');
    const fits = await sends(2);
    expect(fits.status).toBe(200);
    expect(fs.readdirSync(folder).sort()).toEqual(['f1.html', 'page.html']);
  });
});
