import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, useTestHosts } from '../test-support/index.js';
import { loadHostSettings } from './load.js';
import { closestKey } from './unknown-keys.js';

const hosts = useTestHosts();
const FILE_SINK = {
  WriteTo: [
    {
      Name: 'File',
      Args: { path: '../log/app.log', outputTemplate: '{Level:u3} {SourceContext}: {Message:lj}{NewLine}' },
    },
  ],
};

describe('unknown keys in appsettings.json', () => {
  it('are warned about with file, line, column and the closest known key', () => {
    const home = hosts.home();
    home.write(
      'app/appsettings.json',
      [
        '{',
        '  "AppSettings": {',
        '    "RunEnvironment": "P",',
        '    "ServerPrt": 9000,',
        '    "NoSuchThingAtAll": 1,',
        '    "Security": { "EnableSecurityHeader": false }',
        '  },',
        '  "Kestrl": {},',
        '  "AllowedHosts": "*"',
        '}',
      ].join('\n'),
    );
    const { warnings, settings } = loadHostSettings(home.appDir, {});
    const file = path.join(home.appDir, 'appsettings.json');
    expect(warnings).toEqual([
      `${file}:3:23: unknown key "AppSettings:RunEnvironment" (ignored); did you mean \`RunningEnvironment\`?`,
      `${file}:4:18: unknown key "AppSettings:ServerPrt" (ignored); did you mean \`ServerPort\`?`,
      `${file}:5:25: unknown key "AppSettings:NoSuchThingAtAll" (ignored)`,
      `${file}:6:43: unknown key "AppSettings:Security:EnableSecurityHeader" (ignored); did you mean \`EnableSecurityHeaders\`?`,
      `${file}:8:13: unknown key "Kestrl" (ignored); did you mean \`Kestrel\`?`,
    ]);
    // The typo is not applied: the default stays, which is why the warning matters.
    expect(settings.AppSettings.RunningEnvironment).toBe('D');
  });

  it('are not reported for keys that differ only in case, as .NET configuration matches them', () => {
    const home = hosts.home({ appsettings: { runningenvironment: 'P' } });
    const { warnings, settings } = loadHostSettings(home.appDir, {});
    expect(warnings).toEqual([]);
    expect(settings.AppSettings.RunningEnvironment).toBe('P');
  });

  it('reach the start-up log as warnings, with unknown module.json keys', async () => {
    const home = hosts.home(
      { AppSettings: { LoadModules: ['probe'], UseContractSynk: true }, Serilog: FILE_SINK },
      { ...moduleFiles(['probe']), 'modules/probe/module.json': '{\n  "ModuleID": "probe",\n  "Verison": "1.0.0"\n}' },
    );
    const running = await hosts.start(home, { probe: probeModule() });
    await running.close();
    const log = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
    expect(log).toContain(
      `WRN : ${home.appDir}/appsettings.json:6:24: unknown key "AppSettings:UseContractSynk" (ignored); did you mean \`UseContractSync\`?`,
    );
    expect(log).toContain(
      `WRN : ${home.home}/modules/probe/module.json:3:14: unknown key "Verison" (ignored); did you mean \`Version\`?`,
    );
  });
});

describe('the known keys come from the settings schema', () => {
  it('so WebSocket, TLS endpoint and HTTP/2 keys draw no warning, endpoint names included', () => {
    const home = hosts.home({
      AppSettings: {
        WebSocket: { MaxPayloadBytes: 65536, EnablePerMessageDeflate: false, KeepAliveInterval: '00:00:30' },
        ServerListenAddress: '127.0.0.1',
        AccessLogFilePath: '',
      },
      Kestrel: {
        Endpoints: {
          AnyNameAtAll: {
            Url: 'https://127.0.0.1:0',
            Protocols: 'Http1AndHttp2',
            Certificate: { Path: 'a.crt', KeyPath: 'a.key', Password: '' },
          },
          Plain: { Url: 'http://127.0.0.1:0', Protocols: 'Http2' },
        },
        Limits: {
          MaxConcurrentUpgradedConnections: 10,
          RequestHeadersTimeout: '00:00:30',
          Http2: { MaxStreamsPerConnection: 50 },
        },
      },
    });
    expect(loadHostSettings(home.appDir, {}).warnings).toEqual([]);
  });

  it('and a typo in one of them is pointed out', () => {
    const home = hosts.home({
      AppSettings: { WebSocket: { MaxPayloadByte: 1 } },
      Kestrel: {
        Endpoints: { Web: { Url: 'http://127.0.0.1:0', Protocol: 'Http1' } },
        Limits: { Http2: { MaxStreamPerConnection: 5 } },
      },
    });
    const warnings = loadHostSettings(home.appDir, {}).warnings.map((w) => w.replace(/^.*?: unknown/, 'unknown'));
    expect(warnings).toEqual([
      'unknown key "AppSettings:WebSocket:MaxPayloadByte" (ignored); did you mean `MaxPayloadBytes`?',
      'unknown key "Kestrel:Endpoints:Web:Protocol" (ignored); did you mean `Protocols`?',
      'unknown key "Kestrel:Limits:Http2:MaxStreamPerConnection" (ignored); did you mean `MaxStreamsPerConnection`?',
    ]);
  });
});

describe('closestKey', () => {
  it('suggests a plausible typo and nothing for an unrelated word', () => {
    expect(closestKey('RunEnvironment', ['RunningEnvironment', 'ServerPort'])).toBe('RunningEnvironment');
    expect(closestKey('serverprot', ['RunningEnvironment', 'ServerPort'])).toBe('ServerPort');
    expect(closestKey('Colour', ['RunningEnvironment', 'ServerPort'])).toBeUndefined();
  });
});

describe('quoted scalars, as the .NET host reads them', () => {
  it('accepts "true", "60" and " 8080 " with the meaning of true, 60 and 8080', () => {
    const home = hosts.home({
      AppSettings: {
        IsEnabledDevAutoSignIn: 'true',
        UseHttpLogging: 'False',
        StaticFileCacheMaxAge: '60',
        ServerPort: ' 8080 ',
        UserSignExpire: '-1',
      },
      Kestrel: { Limits: { MaxRequestBodySize: '1048576' } },
    });
    const { settings, warnings } = loadHostSettings(home.appDir, {});
    expect(warnings).toEqual([]);
    expect(settings.AppSettings.IsEnabledDevAutoSignIn).toBe(true);
    expect(settings.AppSettings.UseHttpLogging).toBe(false);
    expect(settings.AppSettings.StaticFileCacheMaxAge).toBe(60);
    expect(settings.AppSettings.ServerPort).toBe(8080);
    expect(settings.AppSettings.UserSignExpire).toBe(-1);
    expect(settings.Kestrel.Limits.MaxRequestBodySize).toBe(1_048_576);
  });

  it('still refuses text that is not the type ("yes", "60s"), naming the key and line', () => {
    const home = hosts.home();
    home.write(
      'app/appsettings.json',
      '{\n  "AppSettings": {\n    "IsEnabledDevAutoSignIn": "yes",\n    "StaticFileCacheMaxAge": "60s"\n  }\n}',
    );
    expect(() => loadHostSettings(home.appDir, {})).toThrow(
      /appsettings\.json:3:31: AppSettings:IsEnabledDevAutoSignIn: expected true or false, got "yes"[\s\S]*:4:30: AppSettings:StaticFileCacheMaxAge: expected an integer >= 0, got "60s"/,
    );
  });
});

describe('start-up warnings', () => {
  it('warns when no module loads', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: ['missing'] }, Serilog: FILE_SINK });
    const running = await hosts.start(home);
    await running.close();
    const log = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
    expect(log).toMatch(
      /WRN : no module loaded: every request will be answered 404 \(AppSettings:LoadModules names missing;/,
    );
  });
});
