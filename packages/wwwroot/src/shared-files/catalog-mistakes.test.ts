import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startWwwroot } from '../test-support/test-fixture.js';
import { secretTargetReason } from './catalog.js';

const CATALOG = '../config/shared_files.json';

describe('the catalog is read like the other settings files', () => {
  it('accepts comments and trailing commas', async () => {
    const t = await startWwwroot({
      moduleConfig: { SharedFileConfigPath: CATALOG },
      files: {
        'config/shared_files.json':
          '{\n  // published for every screen\n  "items": [\n    { "requestPath": "/theme.css", "hostFilePath": "../shared/theme.css", },\n  ],\n}\n',
        'shared/theme.css': 'body{}',
      },
    });
    try {
      expect(await (await fetch(`${t.url}/shared-files/manifest`)).json()).toEqual([{ requestPath: '/theme.css' }]);
      expect(await (await fetch(`${t.url}/theme.css`)).text()).toBe('body{}');
    } finally {
      await t.close();
    }
  });

  it('reports a syntax error with line and column', async () => {
    const t = await startWwwroot({
      moduleConfig: { SharedFileConfigPath: CATALOG },
      files: {
        'config/shared_files.json':
          '{\n  "items": [\n    { "requestPath": "/a.css" "hostFilePath": "../a.css" }\n  ]\n}\n',
      },
    });
    try {
      expect(t.logs).toContainEqual(
        expect.stringMatching(
          /^warn: shared files: off: .*config\/shared_files\.json:3:31: not valid JSON: expected "," between entries$/,
        ),
      );
    } finally {
      await t.close();
    }
  });

  it('warns about unknown keys with line and the closest known key, and says where a skipped item is', async () => {
    const t = await startWwwroot({
      moduleConfig: { SharedFileConfigPath: CATALOG },
      files: {
        'config/shared_files.json':
          '{\n  "items": [\n    { "requestPath": "/a.css", "hostFilePath": "../shared/a.css" },\n    { "requestpath": "/b.css", "hostFilePth": "../shared/b.css" }\n  ]\n}\n',
        'shared/a.css': 'a{}',
      },
    });
    try {
      const warnings = t.logs.filter((l) => l.startsWith('warn:'));
      expect(warnings).toContainEqual(
        expect.stringMatching(
          /shared_files\.json:4:22: unknown key "items\[1\]\.requestpath" \(ignored\); did you mean `requestPath`\?$/,
        ),
      );
      expect(warnings).toContainEqual(
        expect.stringMatching(
          /shared_files\.json:4:47: unknown key "items\[1\]\.hostFilePth" \(ignored\); did you mean `hostFilePath`\?$/,
        ),
      );
      expect(warnings).toContainEqual(
        expect.stringMatching(/shared_files\.json:4:5: items\[1\] has an empty requestPath or hostFilePath; skipped$/),
      );
    } finally {
      await t.close();
    }
  });
});

describe('a catalog entry that points at a secret', () => {
  it.each([
    ['the host settings', 'appsettings.json'],
    ['the settings of one environment', 'appsettings.edge.json'],
    ['settings in another case', 'APPSETTINGS.Development.json'],
    ['a module.json', '../modules/wwwroot/module.json'],
    ['the signing key', '../.ack/signing.key'],
    ['a dotfile', '../shared/.env'],
    ['a file in a dot folder', '../.git/config'],
    ['a private key', '../shared/server.pem'],
    ['the catalog itself', '../config/shared_files.json'],
  ])('is refused at start: %s', async (_name, hostFilePath) => {
    const start = startWwwroot({
      moduleConfig: { SharedFileConfigPath: CATALOG },
      files: {
        'config/shared_files.json': {
          items: [
            { requestPath: '/ok.css', hostFilePath: '../shared/ok.css' },
            { requestPath: '/leak', hostFilePath },
          ],
        },
      },
    });
    await expect(start).rejects.toThrow(
      /shared_files\.json:\d+:\d+: items\[1\]: refused to publish \/leak -> .+: it .+, which must never be public; remove the entry/,
    );
  });

  // Each rule with the names right beside it: what it must still refuse and what it must let through.
  const base = '/srv/home/app';
  const reason = (relative: string) => secretTargetReason(path.posix.join(base, relative), undefined, base);

  it.each([
    ['appsettings.json', /settings file/],
    ['appsettings.edge.json', /settings file/],
    ['appsettings.Development.json', /settings file/],
    ['APPSETTINGS.Development.JSON', /settings file/],
    ['../config/appsettings.local.json', /settings file/],
    ['../modules/wwwroot/module.json', /module's settings/],
    ['../modules/wwwroot/MODULE.JSON', /module's settings/],
    ['../.ack/signing.key', /\.ack folder/],
    ['../.ack/keyring.json', /\.ack folder/],
    ['../.ACK/signing.key', /\.ack folder/],
    ['../shared/signing.key', /key or certificate/],
    ['../shared/SERVER.PEM', /key or certificate/],
    ['../shared/site.pfx', /key or certificate/],
    ['../shared/site.p12', /key or certificate/],
    ['../shared/trust.jks', /key or certificate/],
    ['../shared/app.keystore', /key or certificate/],
    ['../shared/.env', /dotfile/],
    ['../shared/.well-known/.hidden', /dotfile/],
    ['../.git/config', /dot folder/],
  ])('refuses %s', (relative, why) => {
    expect(reason(relative)).toMatch(why);
  });

  it.each([
    'appsettings.json.txt',
    'appsettings.css',
    'my-appsettings.json',
    'settings.json',
    '../shared/theme.json',
    '../modules/wwwroot/module.json.md',
    '../modules/wwwroot/my-module.json',
    '../shared/keyboard.css',
    '../shared/signing.key.txt',
    '../shared/pemmican.txt',
    '../shared/ack/logo.svg',
    '../shared/a.env.js',
    '../shared/.well-known/security.txt',
  ])('publishes %s', (relative) => {
    expect(reason(relative)).toBeUndefined();
  });

  it('serves files whose names only resemble a secret', async () => {
    const near = ['appsettings.css', 'settings.json', 'keyboard.css', 'module.json.md'];
    const t = await startWwwroot({
      moduleConfig: { SharedFileConfigPath: CATALOG },
      files: {
        'config/shared_files.json': {
          items: near.map((name) => ({ requestPath: `/${name}`, hostFilePath: `../shared/${name}` })),
        },
        ...Object.fromEntries(near.map((name) => [`shared/${name}`, `published ${name}`])),
      },
    });
    try {
      for (const name of near) {
        const res = await fetch(`${t.url}/${name}`);
        expect(res.status, name).toBe(200);
        expect(await res.text(), name).toBe(`published ${name}`);
      }
    } finally {
      await t.close();
    }
  });

  it('leaves .well-known files publishable', () => {
    expect(secretTargetReason('/srv/home/shared/.well-known/security.txt')).toBeUndefined();
    expect(secretTargetReason('/srv/home/shared/theme.css')).toBeUndefined();
  });

  it('judges folders from the entry base path down, not the folders the home lives in', () => {
    const base = '/srv/.work/home/app';
    expect(secretTargetReason('/srv/.work/home/shared/theme.css', undefined, base)).toBeUndefined();
    expect(secretTargetReason('/srv/.work/home/app/www/app.js', undefined, base)).toBeUndefined();
    expect(secretTargetReason('/srv/.work/home/.git/config', undefined, base)).toMatch(/dot folder/);
    expect(secretTargetReason('/srv/.work/home/.ack/signing.key', undefined, base)).toMatch(/\.ack folder/);
    expect(secretTargetReason('/etc/.secrets/token.txt', undefined, base)).toMatch(/dot folder/);
  });

  it('publishes the shared files of a home that lives inside a dot folder', async () => {
    const t = await startWwwroot({
      homeUnder: '.hidden',
      moduleConfig: { SharedFileConfigPath: CATALOG },
      files: {
        'config/shared_files.json': { items: [{ requestPath: '/ok.css', hostFilePath: '../shared/ok.css' }] },
        'shared/ok.css': 'ok',
      },
    });
    try {
      const res = await fetch(`${t.url}/ok.css`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('ok');
    } finally {
      await t.close();
    }
  });
});

describe('module settings mistakes', () => {
  it('warn about unknown ModuleConfig keys with line and suggestion, and a missing static root', async () => {
    const t = await startWwwroot({ moduleConfig: { WWWRootBasePth: '../static', WWWRootBasePath: '../nowhere' } });
    try {
      const file = path.join(path.dirname(t.host.settingsFile), '..', 'modules', 'wwwroot', 'module.json');
      expect(fs.existsSync(file)).toBe(true);
      expect(t.logs).toContainEqual(
        expect.stringMatching(
          /^warn: .*modules\/wwwroot\/module\.json:\d+:\d+: unknown key "ModuleConfig:WWWRootBasePth" \(ignored\); did you mean `WWWRootBasePath`\?$/,
        ),
      );
      expect(t.logs).toContainEqual(
        expect.stringMatching(/^warn: static root .*\/nowhere does not exist \(ModuleConfig:WWWRootBasePath\)/),
      );
    } finally {
      await t.close();
    }
  });
});
