import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts, type TestHome, type TestHost } from '../test-support/index.js';
import { loadHostSettings, SettingsError } from './load.js';

const hosts = useTestHosts();
let home: TestHome | undefined;
let running: TestHost | undefined;

function load(content: object, env: NodeJS.ProcessEnv) {
  home = hosts.home(content);
  return loadHostSettings(home.appDir, env).settings;
}

describe('environment overrides (.NET convention: Section__Key=value)', () => {
  it('override booleans, numbers, enums and nested keys, winning over the file', () => {
    const s = load(
      { AppSettings: { RunningEnvironment: 'D', Security: { ExposeSecretValues: false } } },
      {
        AppSettings__RunningEnvironment: 'P',
        AppSettings__Security__ExposeSecretValues: 'true',
        AppSettings__Security__MaxContractSyncFileBytes: '2048',
        AppSettings__UseForwardProxy: 'True',
        Kestrel__Limits__KeepAliveTimeout: '00:00:10',
        Serilog__MinimumLevel__Override__http: 'Warning',
      },
    );
    expect(s.AppSettings.RunningEnvironment).toBe('P');
    expect(s.AppSettings.Security.ExposeSecretValues).toBe(true);
    expect(s.AppSettings.Security.MaxContractSyncFileBytes).toBe(2048);
    expect(s.AppSettings.UseForwardProxy).toBe(true);
    expect(s.Kestrel.Limits.KeepAliveTimeout).toBe('00:00:10');
    expect(s.Serilog.MinimumLevel).toEqual({
      Default: 'Information',
      Override: { Microsoft: 'Error', System: 'Error', http: 'Warning' },
    });
  });

  it('match names ignoring case, and enum values too', () => {
    const s = load(
      {},
      {
        APPSETTINGS__RUNNINGENVIRONMENT: 's',
        appsettings__sessionstate__cachetype: 'memory',
        AppSettings__security__enableSecurityHeaders: 'false',
      },
    );
    expect(s.AppSettings.RunningEnvironment).toBe('S');
    expect(s.AppSettings.SessionState.CacheType).toBe('Memory');
    expect(s.AppSettings.Security.EnableSecurityHeaders).toBe(false);
  });

  it('set list items by index: replacing an item of the file, adding one after it', () => {
    const s = load(
      { AppSettings: { LoadModules: ['wwwroot', 'transact', 'dbclient'] } },
      {
        AppSettings__LoadModules__1: 'checkup',
        AppSettings__LoadModules__7: 'forwarder',
        AppSettings__WithOnlyIPs__0: '10.0.0.1',
        AppSettings__WithOnlyIPs__1: '10.0.0.2',
      },
    );
    expect(s.AppSettings.LoadModules).toEqual(['wwwroot', 'checkup', 'dbclient', 'forwarder']);
    expect(s.AppSettings.WithOnlyIPs).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('reach into lists of objects (Serilog sinks) and coerce their Args', () => {
    const s = load(
      { Serilog: { WriteTo: [{ Name: 'Console' }, { Name: 'File', Args: { path: '../log/app.log' } }] } },
      {
        Serilog__WriteTo__1__Args__fileSizeLimitBytes: '4096',
        Serilog__WriteTo__1__Args__buffered: 'false',
        Serilog__MinimumLevel: 'Debug',
      },
    );
    expect(s.Serilog.WriteTo[1]!.Args).toMatchObject({
      path: '../log/app.log',
      fileSizeLimitBytes: 4096,
      buffered: false,
    });
    expect(s.Serilog.MinimumLevel).toBe('Debug');
  });

  it('accept null or empty for a nullable number, and keep unknown keys as text', () => {
    const s = load(
      { Kestrel: { Limits: { MaxRequestBodySize: 10 } } },
      {
        Kestrel__Limits__MaxRequestBodySize: 'null',
        Kestrel__Limits__MaxConcurrentConnections: '',
        AppSettings__WebHostRootPath: '/srv',
      },
    );
    expect(s.Kestrel.Limits.MaxRequestBodySize).toBeNull();
    expect(s.Kestrel.Limits.MaxConcurrentConnections).toBeNull();
    expect((s.AppSettings as Record<string, unknown>).WebHostRootPath).toBe('/srv');
  });

  it('ignore variables of other sections (PATH, ASPNETCORE_URLS, Foo__Bar)', () => {
    const s = load({}, { PATH: '/bin', ASPNETCORE_URLS: 'http://x', Foo__Bar: '1', AppSettings: 'x' });
    expect(s.AppSettings.RunningEnvironment).toBe('D');
  });

  it('report every value that cannot be used, naming the variable, the key and the expectation', () => {
    home = hosts.home({});
    let error: SettingsError | undefined;
    try {
      loadHostSettings(home.appDir, {
        AppSettings__Security__ExposeSecretValues: 'yes',
        AppSettings__Security__MaxContractSyncFileBytes: 'abc',
        AppSettings__RunningEnvironment: 'Q',
        AppSettings__LoadModules__first: 'x',
        AppSettings__Security: 'on',
      });
    } catch (err) {
      error = err as SettingsError;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const file = `${home.appDir}/appsettings.json`;
    expect(error!.message.split('\n').sort()).toEqual([
      `${file}: AppSettings:LoadModules:first: "first" is not an item number (this key is a list: use __0, __1, ...) (from environment variable AppSettings__LoadModules__first)`,
      `${file}: AppSettings:RunningEnvironment: expected one of D, S, P, T, L, got "Q" (from environment variable AppSettings__RunningEnvironment)`,
      `${file}: AppSettings:Security: is a section, not a value: set its keys with one more "__" (e.g. __Name) (from environment variable AppSettings__Security)`,
      `${file}: AppSettings:Security:ExposeSecretValues: expected true or false, got "yes" (from environment variable AppSettings__Security__ExposeSecretValues)`,
      `${file}: AppSettings:Security:MaxContractSyncFileBytes: expected an integer > 0, got "abc" (from environment variable AppSettings__Security__MaxContractSyncFileBytes)`,
    ]);
  });

  it('reach the running host: an override turns a host feature on', async () => {
    home = hosts.home(testAppSettings());
    running = await hosts.start(home, {}, { AppSettings__Security__EnableSecurityHeaders: 'false' });
    expect(running.host.settings.AppSettings.Security.EnableSecurityHeaders).toBe(false);
    const res = await fetch(`${running.url}/nothing-here`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-content-type-options')).toBeNull();
  });
});
