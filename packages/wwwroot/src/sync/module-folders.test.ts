import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { syncUpload } from '../test-support/test-fixture.js';

const TOKEN = 'folder-token';
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
    const res = await syncUpload(
      url,
      TOKEN,
      { moduleName: 'command', changeType: 'Created', filePath: 'HDS/cmd.json' },
      '{"c":1}',
    );
    expect(res.status).toBe(200);
    expect(fs.readFileSync(path.join(home.home, 'contracts', 'command-main', 'HDS', 'cmd.json'), 'utf8')).toBe(
      '{"c":1}',
    );
    expect(fs.existsSync(path.join(home.home, 'contracts', 'command'))).toBe(false);
  });
});
