import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

const TOKEN = 'folder-token';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const hosts = useTestHosts();

describe("sync reads another module's module.json as start-up does", () => {
  it('finds ContractBasePath in a module.json with comments and trailing commas', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      // Written by hand, as start-up accepts it: a comment and trailing commas.
      'modules/command/module.json':
        '{\n  // where the command contracts live\n  "ModuleID": "command",\n  "ModuleConfig": { "ContractBasePath": ["../contracts/command-main",], },\n}\n',
    });
    const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
    const data = new FormData();
    data.append('moduleName', 'command');
    data.append('changeType', 'Created');
    data.append('filePath', 'HDS/cmd.json');
    data.append('file', new Blob(['{"c":1}']), 'cmd.json');
    const res = await fetch(`${url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      body: data,
      headers: { Authorization: AUTH },
    });
    expect(res.status).toBe(200);
    expect(fs.readFileSync(path.join(home.home, 'contracts', 'command-main', 'HDS', 'cmd.json'), 'utf8')).toBe(
      '{"c":1}',
    );
    expect(fs.existsSync(path.join(home.home, 'contracts', 'command'))).toBe(false);
  });
});
