import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

const hosts = useTestHosts();
const AUTH = `Basic ${Buffer.from('team-token:').toString('base64')}`;

describe('sync upload: concurrent deletes of one file', () => {
  it('all answer 200 (the file is gone, as each asked); exactly one found it; never a 500', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: ['team-token'] } },
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
    });
    const running = await hosts.start(home, { wwwroot: wwwrootModule });
    const remove = async () => {
      const form = new FormData();
      form.append('moduleName', 'wwwroot');
      form.append('changeType', 'Deleted');
      form.append('filePath', 'HDS/page.html');
      const res = await fetch(`${running.url}/wwwroot/api/sync/upload`, {
        method: 'POST',
        headers: { Authorization: AUTH },
        body: form,
      });
      return { status: res.status, body: (await res.json()) as { existed?: boolean; code?: string } };
    };
    const answers = await Promise.all(Array.from({ length: 12 }, remove));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => a.body.existed === true)).toHaveLength(1);
    const folder = path.join(home.home, 'contracts', 'wwwroot', 'HDS');
    // The folder the deletion emptied went with it (docs/sync.md "The delta").
    expect(fs.existsSync(folder)).toBe(false);
  });
});
