import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

const hosts = useTestHosts();
const basic = (token: string) => 'Basic ' + Buffer.from(`${token}:`).toString('base64');

describe('failed sync-token checks', () => {
  it('a client address that keeps presenting wrong tokens gets 429 with Retry-After, even with the right one', async () => {
    const home = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], Security: { MaxFailedAccessChecks: 4 } } }),
      { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: ['right-token'] } } },
    );
    const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
    const refresh = (authorization: string, headers: Record<string, string> = {}) =>
      fetch(`${url}/wwwroot/api/sync/refresh?moduleName=wwwroot&changeType=Changed&filePath=HDS/x.html`, {
        headers: { authorization, ...headers },
      });
    // A missing token is not a guess: it does not count.
    for (let i = 0; i < 6; i++) expect((await fetch(`${url}/wwwroot/api/sync/refresh`)).status).toBe(401);
    for (let i = 0; i < 4; i++) expect((await refresh(basic(`guess-${i}`))).status).toBe(401);
    const blocked = await refresh(basic('right-token'));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await blocked.json()).toMatchObject({ status: 429, code: 'request.too_many_failed_checks' });
  });
});
