import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestHosts, type TestHome } from '../test-support/index.js';
import { loadHostSettings, SettingsError } from './load.js';
import { DEFAULT_LOAD_MODULES, DEFAULT_OUTPUT_TEMPLATE } from './schema.js';

let home: TestHome | undefined;
const hosts = useTestHosts();

function load(content: object | string, env: NodeJS.ProcessEnv = {}) {
  home = hosts.home();
  home.write('app/appsettings.json', content);
  return loadHostSettings(home.appDir, env);
}

/** The SettingsError thrown for `content`, with its message split into lines. */
function failure(
  content: object | string,
  env: NodeJS.ProcessEnv = {},
): { error: SettingsError; lines: string[]; file: string } {
  try {
    load(content, env);
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    const error = err as SettingsError;
    expect(error.exitCode).toBe(2);
    return { error, lines: error.message.split('\n'), file: `${home!.appDir}/appsettings.json` };
  }
  throw new Error('expected a SettingsError');
}

describe('defaults when appsettings.json is {}', () => {
  it('fills every section with the documented defaults', () => {
    const { settings, file } = load({});
    expect(file).toBe(`${home!.appDir}/appsettings.json`);
    const app = settings.AppSettings;
    expect(app).toMatchObject({
      ProgramName: 'ack',
      InstallType: 'L',
      BusinessServerUrl: 'http://localhost:8421/transact/api/transaction/execute',
      FindGlobalIDServer: '',
      ForwardProxyIP: [],
      IsAutoUpdate: false,
      IsConfigurationWatching: false,
      IsTenantFunction: true,
      IsExceptionDetailText: true,
      IsEnabledDevAutoSignIn: false,
      ContractRequestPath: 'view',
      TenantAppRequestPath: 'app',
      TenantAppBasePath: '../tenants',
      BatchProgramBasePath: '../batchs',
      CreateAppTempPath: '../tmp/create_apps',
      ForbesBasePath: '../forbes',
      IsModulePurgeContract: true,
      IsEnabledCSP: false,
      LoadModuleBasePath: '../modules',
      LoadModules: DEFAULT_LOAD_MODULES,
      ModuleConfigurationUrl: [],
      RunningEnvironment: 'D',
      UseResponseComression: false,
      UseForwardProxy: false,
      UseSameIPProxy: false,
      UseContractSync: false,
      UseHttpLogging: false,
      WithOrigins: ['http://127.0.0.1', 'http://127.0.0.1:8421', 'http://localhost', 'http://localhost:8421'],
      WithOnlyIPs: [],
      UserSignExpire: -1,
      StaticFileCacheMaxAge: 0,
      ServerPort: 8421,
    });
    expect(app.DomainAPIServer).toEqual({
      ServerID: 'SERVERD01',
      ServerType: 'D',
      Protocol: 'http',
      IP: 'localhost',
      Port: '8421',
      Path: '/transact/api/transaction/execute',
      ClientIP: '127.0.0.1',
    });
    expect(app.LoadModules).toHaveLength(11);
    expect(app.Security).toEqual({
      EnableSecurityHeaders: true,
      EnablePublicCorsPolicy: true,
      ExposeSecretValues: false,
      WarnOnWildcardAllowClientIP: true,
      MaxContractSyncFileBytes: 10485760,
      XFrameOptions: 'SAMEORIGIN',
      SigningKey: '',
      MaxFailedAccessChecks: 10,
      MaxLiveSignOuts: 4_000_000,
      FailedAccessCheckWindow: '00:01:00',
      PreviousSigningKeys: [],
    });
    expect(app.SessionState).toMatchObject({
      IsSession: true,
      SessionCookieName: 'ack.Session',
      CacheType: 'Memory',
      SqlServerSchemaName: 'dbo',
      SqlServerTableName: 'SessionData',
      MySqlTableName: 'SessionData',
    });
    expect(settings.Serilog.MinimumLevel).toEqual({
      Default: 'Information',
      Override: { Microsoft: 'Error', System: 'Error' },
    });
    expect(settings.Serilog.Enrich).toEqual(['FromLogContext']);
    expect(settings.Serilog.WriteTo.map((s) => s.Name)).toEqual(['Console', 'File']);
    expect(settings.Serilog.WriteTo[1]!.Args).toEqual({
      path: '../log/app.log',
      outputTemplate: DEFAULT_OUTPUT_TEMPLATE,
      rollingInterval: 'Day',
      rollOnFileSizeLimit: true,
      buffered: true,
      fileSizeLimitBytes: 104857600,
      flushToDiskInterval: '00:00:05',
    });
    expect(settings.Kestrel).toEqual({
      DisableStringReuse: true,
      Endpoints: {},
      Limits: {
        MaxConcurrentConnections: null,
        MaxConcurrentUpgradedConnections: null,
        MaxRequestBodySize: 104857600,
        KeepAliveTimeout: '00:02:00',
        RequestHeadersTimeout: '00:00:30',
        Http2: { MaxStreamsPerConnection: 100, MaxStreamsPerClient: 256 },
        MinRequestBodyDataRate: { BytesPerSecond: 240, GracePeriod: '00:00:05' },
        MaxConnectionsPerClient: 256,
        ResponseStallTimeout: '00:00:30',
      },
    });
    expect(settings.AllowedHosts).toBe('*');
  });

  it('tolerates a BOM, comments and trailing commas, as .NET does, and keeps unknown keys', () => {
    const { settings } = load(
      '\uFEFF{\n  // the original host\'s files carry comments\n  "AppSettings": { "RunningEnvironment": "P", /* why */ "WebHostRootPath": "x", },\n}\n',
    );
    expect(settings.AppSettings.RunningEnvironment).toBe('P');
    expect((settings.AppSettings as Record<string, unknown>).WebHostRootPath).toBe('x');
  });

  it('matches section and key names and enum values ignoring case, as .NET configuration does', () => {
    const { settings } = load({
      appsettings: { runningenvironment: 'p', security: { exposesecretvalues: true } },
      serilog: { minimumLevel: 'debug' },
      Kestrel: { limits: { maxRequestBodySize: 10 } },
    });
    expect(settings.AppSettings.RunningEnvironment).toBe('P');
    expect(settings.AppSettings.Security.ExposeSecretValues).toBe(true);
    expect(settings.Serilog.MinimumLevel).toBe('Debug');
    expect(settings.Kestrel.Limits.MaxRequestBodySize).toBe(10);
  });

  it('reads Kestrel:Endpoints in any case, and from environment variables as Kestrel does', () => {
    home = hosts.home({
      kestrel: {
        endpoints: {
          Secure: { url: 'https://*:8443', protocols: 'http1andhttp2', certificate: { path: 'a.pfx', password: 'p' } },
        },
      },
    });
    const { settings } = loadHostSettings(home.appDir, {
      Kestrel__Endpoints__Proxied__Url: 'http://127.0.0.1:8480',
      Kestrel__Endpoints__Proxied__Protocols: 'Http2',
    });
    expect(settings.Kestrel.Endpoints).toEqual({
      Secure: {
        Url: 'https://*:8443',
        Protocols: 'Http1AndHttp2',
        Certificate: { Path: 'a.pfx', KeyPath: '', Password: 'p' },
      },
      Proxied: { Url: 'http://127.0.0.1:8480', Protocols: 'Http2' },
    });
  });
});

describe('settings that cannot be used stop start-up naming file, key and expectation', () => {
  it('a missing file', () => {
    home = hosts.home();
    fs.rmSync(`${home.appDir}/appsettings.json`);
    expect(() => loadHostSettings(home!.appDir, {})).toThrow(
      new SettingsError(`${home.appDir}/appsettings.json: file not found`),
    );
  });

  it('invalid JSON, with line and column', () => {
    const { lines, file } = failure(
      '{\n  "AppSettings": {\n    "RunningEnvironment": "D"\n    "ServerPort": 1\n  }\n}',
    );
    expect(lines).toEqual([`${file}:4:5: not valid JSON: expected "," between entries`]);
  });

  it('an empty file, and a top level that is not an object', () => {
    expect(failure('  \n').lines).toEqual([
      `${home!.appDir}/appsettings.json: the file is empty (expected a JSON object)`,
    ]);
    expect(failure('[1]').lines).toEqual([
      `${home!.appDir}/appsettings.json: expected a JSON object at the top level, got a list`,
    ]);
  });

  it('a key given twice in one object (ignoring case)', () => {
    const { lines, file } = failure('{"AppSettings": {"ServerPort": 1,\n "serverPort": 2}}');
    expect(lines).toEqual([
      `${file}:2:2: the key "serverPort" appears twice in one object (keys ignore case; first as "ServerPort")`,
    ]);
  });

  it('a wrong type: integer, boolean, string, list, object', () => {
    const { lines, file } = failure(
      '{"AppSettings": {\n"Security": {"MaxContractSyncFileBytes": "abc"},\n"UseForwardProxy": "yes",\n"SystemID": 5,\n"LoadModules": "wwwroot",\n"DomainAPIServer": []}}',
    );
    expect(lines).toEqual(
      expect.arrayContaining([
        `${file}:2:42: AppSettings:Security:MaxContractSyncFileBytes: expected an integer > 0, got "abc"`,
        `${file}:3:20: AppSettings:UseForwardProxy: expected true or false, got "yes"`,
        `${file}:4:13: AppSettings:SystemID: expected a string, got 5`,
        `${file}:5:16: AppSettings:LoadModules: expected an array (each item a string), got "wwwroot"`,
        `${file}:6:20: AppSettings:DomainAPIServer: expected an object, got a list`,
      ]),
    );
    expect(lines).toHaveLength(5);
  });

  it('an unknown enum value', () => {
    const { lines, file } = failure({
      AppSettings: { RunningEnvironment: 'X', SessionState: { CacheType: 'Oracle' } },
    });
    expect(lines).toContain(`${file}:3:27: AppSettings:RunningEnvironment: expected one of D, S, P, T, L, got "X"`);
    expect(lines).toContain(
      `${file}:5:20: AppSettings:SessionState:CacheType: expected one of Memory, MySql, SqlServer, Redis, PostgreSql, got "Oracle"`,
    );
  });

  it('out of range, a non-integer, a bad time span, a nullable number, a Serilog level', () => {
    const { lines } = failure({
      AppSettings: { ServerPort: 70000, StaticFileCacheMaxAge: 1.5 },
      Kestrel: { Limits: { KeepAliveTimeout: 'two minutes', MaxConcurrentConnections: 'many' } },
      Serilog: {
        MinimumLevel: { Default: 'Loud' },
        WriteTo: [{ Name: 'File', Args: { rollingInterval: 'Weekly' } }, { Args: {} }],
      },
    });
    const text = lines.map((l) => l.replace(/^[^ ]+ /, ''));
    expect(text).toEqual(
      expect.arrayContaining([
        'AppSettings:ServerPort: expected an integer >= 0 and <= 65535, got 70000',
        'AppSettings:StaticFileCacheMaxAge: expected an integer >= 0, got 1.5',
        'Kestrel:Limits:KeepAliveTimeout: expected a time span such as "00:02:00", got "two minutes"',
        'Kestrel:Limits:MaxConcurrentConnections: expected an integer > 0 or null, got "many"',
        'Serilog:MinimumLevel:Default: expected one of Verbose, Debug, Information, Warning, Error, Fatal, got "Loud"',
        'Serilog:WriteTo:0:Args:rollingInterval: expected one of Infinite, Year, Month, Day, Hour, Minute, got "Weekly"',
        'Serilog:WriteTo:1:Name: missing; expected a string',
      ]),
    );
    expect(lines).toHaveLength(7);
  });

  it('never echoes the value of a secret key', () => {
    const { lines } = failure({ AppSettings: { HostAccessID: 12345, SessionState: { MySqlConnectionString: false } } });
    expect(lines.join('\n')).not.toContain('12345');
    expect(lines.some((l) => l.endsWith('AppSettings:HostAccessID: expected a string, got a number'))).toBe(true);
  });
});
