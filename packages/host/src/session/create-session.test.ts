import { describe, expect, it } from 'vitest';
import { createHost } from '../host.js';
import { SettingsError } from '../settings/load.js';
import { moduleFiles, probeModule, testAppSettings, useTestHosts, type TestHost } from '../test-support/index.js';

const hosts = useTestHosts();

async function start(sessionState: Record<string, unknown>): Promise<TestHost> {
  const home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['probe'], SessionState: sessionState } }),
    moduleFiles(['probe']),
  );
  return hosts.start(home, { probe: probeModule() });
}

async function count(url: string, cookie?: string): Promise<{ count: number; cookie: string | undefined }> {
  const res = await fetch(`${url}/probe/api/count`, { headers: cookie ? { Cookie: cookie } : {} });
  const body = (await res.json()) as { count: number };
  return { count: body.count, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie };
}

describe('SessionState', () => {
  it('keeps a session across requests with its cookie', async () => {
    const { url } = await start({});
    const first = await count(url);
    expect(first.count).toBe(1);
    const second = await count(url, first.cookie);
    expect(second.count).toBe(2);
  });

  it('bounds the Memory store: the least recently used session goes first', async () => {
    const { url } = await start({ MemoryMaxEntries: 2 });
    const a = await count(url);
    const b = await count(url);
    expect((await count(url, a.cookie)).count).toBe(2); // a is now the most recent
    await count(url); // c pushes out b
    expect((await count(url, a.cookie)).count).toBe(3);
    expect((await count(url, b.cookie)).count).toBe(1);
  });

  it('refuses a forged session cookie', async () => {
    const { url } = await start({});
    const a = await count(url);
    const forged = a.cookie!.replace(/\.[^.]+$/, '.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect((await count(url, forged)).count).toBe(1);
  });

  it('stops start-up with a clear settings error for a shared store without a connection string', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { SessionState: { CacheType: 'MySql' } } }));
    const attempt = createHost({ appDir: home.appDir, modules: {}, env: {}, logging: { quiet: true } });
    await expect(attempt).rejects.toBeInstanceOf(SettingsError);
    await expect(attempt).rejects.toThrow(
      /AppSettings:SessionState:MySqlConnectionString is empty; CacheType "MySql" needs it/,
    );
  });

  it('stops start-up with a settings error for a connection string it cannot read, without its password', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          SessionState: {
            CacheType: 'SqlServer',
            SqlServerConnectionString: 'Data Source=db;Password=pw-123;Encrypt=perhaps',
          },
        },
      }),
    );
    const attempt = createHost({ appDir: home.appDir, modules: {}, env: {}, logging: { quiet: true } });
    await expect(attempt).rejects.toBeInstanceOf(SettingsError);
    await expect(attempt).rejects.toThrow(/SqlServerConnectionString: Encrypt "perhaps" is not true or false/);
    await expect(attempt).rejects.not.toThrow(/pw-123/);
  });
});
