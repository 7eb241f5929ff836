import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

const hosts = useTestHosts();
const AUTH = `Basic ${Buffer.from('team-token:').toString('base64')}`;

describe('a contract screen read while sync upload replaces it', () => {
  it('is always a whole old or a whole new file, on disk and over HTTP, over 100 uploads', async () => {
    // Distinct contents of different sizes: a torn or half-written file matches none of them.
    const versions = Array.from({ length: 101 }, (_, i) => Buffer.alloc(32 * 1024 + i * 37, `<p>version ${i}</p>`));
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: ['team-token'] } },
      'contracts/wwwroot/HDS/page.html': versions[0]!,
    });
    const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
    const file = path.join(home.home, 'contracts', 'wwwroot', 'HDS', 'page.html');
    const known = new Set(versions.map((v) => v.toString('latin1')));
    let uploading = true;
    const torn: string[] = [];
    let reads = 0;
    const poll = async (read: () => Promise<Buffer>, where: string) => {
      while (uploading) {
        const seen = await read();
        reads++;
        if (!known.has(seen.toString('latin1'))) torn.push(`${where}: ${seen.length} bytes`);
      }
    };
    const readers = [
      poll(() => fs.promises.readFile(file), 'disk'),
      poll(async () => Buffer.from(await (await fetch(`${url}/view/page.html`)).arrayBuffer()), 'http'),
    ];
    for (const version of versions.slice(1)) {
      const form = new FormData();
      form.append('moduleName', 'wwwroot');
      form.append('changeType', 'Changed');
      form.append('filePath', 'HDS/page.html');
      form.append('file', new Blob([version]), 'page.html');
      const res = await fetch(`${url}/wwwroot/api/sync/upload`, {
        method: 'POST',
        headers: { Authorization: AUTH },
        body: form,
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    uploading = false;
    await Promise.all(readers);
    expect(torn).toEqual([]);
    expect(reads).toBeGreaterThan(2);
    expect(Buffer.from(await (await fetch(`${url}/view/page.html`)).arrayBuffer()).equals(versions[100]!)).toBe(true);
  });
});
