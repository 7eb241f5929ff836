import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWwwroot, syncUpload, type WwwrootFixture } from '../test-support/test-fixture.js';

// Files this host writes (sync upload, contract sync) are served new by the very next request:
// the serving layer drops them when the writer reports them, before the writer answers, rather
// than waiting for the folder watch's event (docs/static-files.md "A changed file").

const TOKEN = 'own-writes-token';
const HOST_ACCESS_ID = 'own-writes-host-access';
let t: WwwrootFixture;

beforeAll(async () => {
  t = await startWwwroot({
    appSettings: { ApplicationID: 'HDS', UseContractSync: true, HostAccessID: HOST_ACCESS_ID },
    moduleConfig: { FileSyncTokens: [TOKEN] },
    files: {
      'contracts/wwwroot/HDS/own/screen.html': 'version 00',
      'modules/wwwroot/wwwroot/wwwroot/app/page.html': 'version 00',
    },
  });
});
afterAll(() => t?.close());

const text = async (p: string) => (await fetch(`${t.url}${p}`)).text();

function contractSync(destFilePath: string, content: string, changeType = 'Changed'): Promise<Response> {
  const form = new FormData();
  form.append('moduleID', 'wwwroot');
  form.append('contractType', 'wwwroot');
  form.append('changeType', changeType);
  form.append('destFilePath', destFilePath);
  form.append('file', new Blob([content]), 'page.html');
  return fetch(`${t.url}/contractsync`, { method: 'POST', body: form, headers: { hostAccessID: HOST_ACCESS_ID } });
}

describe('a file this host writes', () => {
  it('is served new right after a sync upload answers, every time (same size, cached before)', async () => {
    for (let i = 1; i <= 20; i++) {
      const before = await text('/view/own/screen.html');
      expect(before).toBe(`version ${String(i - 1).padStart(2, '0')}`);
      const next = `version ${String(i).padStart(2, '0')}`;
      const up = await syncUpload(
        t.url,
        TOKEN,
        { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/own/screen.html' },
        next,
      );
      expect(up.status).toBe(200);
      expect(await text('/view/own/screen.html')).toBe(next);
    }
  });

  it('is served new right after a contract sync answers, every time, and a new folder is found at once', async () => {
    for (let i = 1; i <= 20; i++) {
      expect(await text('/wwwroot/app/page.html')).toBe(`version ${String(i - 1).padStart(2, '0')}`);
      const next = `version ${String(i).padStart(2, '0')}`;
      expect((await contractSync('app/page.html', next)).status).toBe(200);
      expect(await text('/wwwroot/app/page.html')).toBe(next);
    }
    // A folder listing held for a case-insensitive lookup (`/WWWROOT/App/`) learns of a folder created by the write.
    expect((await fetch(`${t.url}/WWWROOT/App/new/x.html`)).status).toBe(404);
    expect((await contractSync('app/New/x.html', 'in a new folder', 'Created')).status).toBe(200);
    expect(await text('/WWWROOT/App/new/x.html')).toBe('in a new folder');
    expect((await contractSync('app/New/x.html', '', 'Deleted')).status).toBe(200);
    expect((await fetch(`${t.url}/WWWROOT/App/new/x.html`)).status).toBe(404);
  });
});
