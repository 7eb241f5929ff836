import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { startWwwroot } from '../test-support/test-fixture.js';

// module.json of the wwwroot module (docs/wire-formats.md): a host starts with it or refuses with an error
// that names the file and the key.

const hosts = useTestHosts();

async function startWith(moduleJson: unknown): Promise<string> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': moduleJson as object,
  });
  try {
    await hosts.start(home, { wwwroot: wwwrootModule });
    return 'started';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('wwwroot module.json', () => {
  it('starts with the original shape and defaults for what is missing', async () => {
    expect(await startWith({ ModuleID: 'wwwroot', Name: 'wwwroot', Version: '1.0.0', ModuleConfig: {} })).toBe(
      'started',
    );
    expect(await startWith({})).toBe('started');
  });

  it('accepts a single string where a list is expected', async () => {
    expect(await startWith({ ModuleConfig: { FileSyncTokens: 'one-token' } })).toBe('started');
  });

  it('names the file and every wrong key', async () => {
    const message = await startWith({
      ModuleConfig: {
        WWWRootBasePath: 42,
        FileSyncTokens: ['ok', 7],
        ContractRequestPath: '../up',
        DevAutoSignIn: { Roles: 'x' },
      },
    });
    expect(message).toMatch(/modules[/\\]wwwroot[/\\]module\.json/);
    expect(message).toContain('ModuleConfig.WWWRootBasePath:');
    expect(message).toContain('ModuleConfig.FileSyncTokens');
    expect(message).toContain('ModuleConfig.ContractRequestPath: must be URL path segments');
    expect(message).toContain('ModuleConfig.DevAutoSignIn.Roles');
  });

  it('takes Releases:Keep and Releases:GraceSeconds within range (quoted numbers count) and names the key out of range', async () => {
    for (const ok of [{ Keep: 1, GraceSeconds: 0 }, { Keep: '1000', GraceSeconds: '604800' }, {}]) {
      expect(await startWith({ ModuleConfig: { Releases: ok } }), JSON.stringify(ok)).toBe('started');
    }
    expect(await startWith({ ModuleConfig: { Releases: { Keep: 0 } } })).toContain('ModuleConfig.Releases.Keep');
    expect(await startWith({ ModuleConfig: { Releases: { Keep: 1001 } } })).toContain('ModuleConfig.Releases.Keep');
    expect(await startWith({ ModuleConfig: { Releases: { Keep: 2.5 } } })).toContain('ModuleConfig.Releases.Keep');
    expect(await startWith({ ModuleConfig: { Releases: { GraceSeconds: -1 } } })).toContain(
      'ModuleConfig.Releases.GraceSeconds',
    );
    expect(await startWith({ ModuleConfig: { Releases: { GraceSeconds: 604801 } } })).toContain(
      'ModuleConfig.Releases.GraceSeconds',
    );
  });

  it('refuses a ModuleConfig that is not an object and an empty ModuleID', async () => {
    expect(await startWith({ ModuleConfig: [] })).toContain('ModuleConfig:');
    expect(await startWith({ ModuleID: '' })).toContain('ModuleID: must not be empty');
  });

  it('resolves paths from the entry base path with environment variables expanded', async () => {
    const t = await startWwwroot({
      env: { STATIC_DIR: '../site' },
      moduleConfig: { WWWRootBasePath: '${STATIC_DIR}/public' },
      files: { 'site/public/x.txt': 'from the expanded path' },
    });
    try {
      expect(await (await fetch(`${t.url}/x.txt`)).text()).toBe('from the expanded path');
    } finally {
      await t.close();
    }
  });
});
