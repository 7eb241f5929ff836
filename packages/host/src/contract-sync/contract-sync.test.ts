import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts, type TestHome, type TestHost } from '../test-support/index.js';
import { isTemporaryFileName } from '../fs/safe-write.js';
import type { ContractChangeEvent } from '../modules/contract.js';

const KEY = 'team-host-key';
const KEY_SHA = createHash('sha256').update(KEY).digest('hex');

const hosts = useTestHosts();
let home: TestHome | undefined;
let running: TestHost | undefined;

async function start(
  appSettings: Record<string, unknown> = { UseContractSync: true, HostAccessID: KEY },
): Promise<TestHost> {
  home = hosts.home(
    testAppSettings({ AppSettings: { ...appSettings, Security: { MaxContractSyncFileBytes: 2048 } } }),
    {
      'modules/HDS/Contracts/transact/HDS/old.json': 'old module copy',
      'contracts/transact/HDS/old.json': 'old shared copy',
    },
  );
  running = await hosts.start(home);
  return running;
}

interface SyncFields {
  moduleID?: string;
  contractType?: string;
  destFilePath?: string;
  changeType?: string;
}

/** As handsonapp sends it: the file part first, then the fields. */
function contractSync(
  url: string,
  fields: SyncFields,
  file?: string | Buffer,
  headers: Record<string, string> = { hostAccessID: KEY_SHA },
) {
  const body = new FormData();
  if (file !== undefined) body.append('file', new Blob([file]), 'f');
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.append(k, v);
  return fetch(`${url}/contractsync`, { method: 'POST', body, headers });
}

/** The part of a `/contractsync` answer the tests read. */
interface SyncAnswer {
  targets: Array<{ path: string; existed: boolean }>;
}

const under = (...parts: string[]) => path.join(home!.home, ...parts);
const read = (...parts: string[]) => fs.readFileSync(under(...parts), 'utf8');
const leftovers = () =>
  (fs.readdirSync(home!.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
    isTemporaryFileName(path.basename(f)),
  );

describe('POST /contractsync', () => {
  it('does not exist unless UseContractSync is true', async () => {
    const { url } = await start({ HostAccessID: KEY });
    const res = await contractSync(
      url,
      { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS/a.json', changeType: 'Created' },
      'x',
    );
    expect(res.status).toBe(404);
    expect(fs.existsSync(under('contracts', 'transact', 'HDS', 'a.json'))).toBe(false);
  });

  it('needs the hostAccessID header: the configured value or its SHA-256 hex, never the query string', async () => {
    const { url } = await start();
    const fields = { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS/a.json', changeType: 'Created' };
    const refused: Array<[Record<string, string>, string, string]> = [
      [{}, '', 'contractsync.missing_host_access_id'],
      [{ hostAccessID: 'wrong' }, '', 'contractsync.invalid_host_access_id'],
      [{ hostAccessID: KEY_SHA.toUpperCase() }, '', 'contractsync.invalid_host_access_id'],
      [{}, `?hostAccessID=${KEY_SHA}`, 'contractsync.missing_host_access_id'],
    ];
    for (const [headers, query, code] of refused) {
      const body = new FormData();
      for (const [k, v] of Object.entries(fields)) body.append(k, v);
      body.append('file', new Blob(['x']), 'f');
      const res = await fetch(`${url}/contractsync${query}`, { method: 'POST', body, headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code });
    }
    expect(fs.existsSync(under('contracts', 'transact', 'HDS', 'a.json'))).toBe(false);
    expect((await contractSync(url, fields, 'hashed', { hostAccessID: KEY_SHA })).status).toBe(200);
    expect((await contractSync(url, fields, 'plain', { hostaccessid: KEY })).status).toBe(200);
    expect(read('contracts', 'transact', 'HDS', 'a.json')).toBe('plain');
  });

  it('refuses everyone when HostAccessID is empty', async () => {
    const { url } = await start({ UseContractSync: true, HostAccessID: '' });
    const res = await contractSync(
      url,
      { moduleID: 'HDS', contractType: 'transact', destFilePath: 'a.json', changeType: 'Created' },
      'x',
      { hostAccessID: '' },
    );
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'contractsync.not_configured' });
  });

  it('refuses everyone while HostAccessID is a shipped placeholder, even when the caller sends it', async () => {
    for (const placeholder of ['ACK_HOSTACCESSID', 'HANDSTACK_HOSTACCESSID']) {
      const { url } = await start({ UseContractSync: true, HostAccessID: placeholder });
      const hashed = createHash('sha256').update(placeholder).digest('hex');
      for (const presented of [placeholder, hashed]) {
        const res = await contractSync(
          url,
          { moduleID: 'HDS', contractType: 'transact', destFilePath: 'a.json', changeType: 'Created' },
          'x',
          { hostAccessID: presented },
        );
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ code: 'contractsync.not_configured' });
      }
      await running?.close();
      running = undefined;
      home?.remove();
      home = undefined;
    }
  });

  it('writes both targets of a contract type, file part first or last', async () => {
    const { url } = await start();
    const res = await contractSync(
      url,
      { moduleID: 'HDS', contractType: 'transact', destFilePath: '/HDS/old.json', changeType: 'Changed' },
      '{"new":true}',
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as SyncAnswer;
    expect(body).toMatchObject({
      moduleID: 'HDS',
      contractType: 'transact',
      path: 'HDS/old.json',
      change: 'Changed',
      bytes: 12,
    });
    expect(body.targets).toEqual([
      { path: under('modules', 'HDS', 'Contracts', 'transact', 'HDS', 'old.json'), existed: true },
      { path: under('contracts', 'transact', 'HDS', 'old.json'), existed: true },
    ]);
    expect(read('modules', 'HDS', 'Contracts', 'transact', 'HDS', 'old.json')).toBe('{"new":true}');
    expect(read('contracts', 'transact', 'HDS', 'old.json')).toBe('{"new":true}');

    const fieldsFirst = new FormData();
    fieldsFirst.append('moduleID', 'HDS');
    fieldsFirst.append('contractType', 'dbclient');
    fieldsFirst.append('destFilePath', 'HDS\\q\\new.xml');
    fieldsFirst.append('changeType', 'Created');
    fieldsFirst.append('file', new Blob(['<q/>']), 'new.xml');
    expect(
      (await fetch(`${url}/contractsync`, { method: 'POST', body: fieldsFirst, headers: { hostAccessID: KEY_SHA } }))
        .status,
    ).toBe(200);
    expect(read('modules', 'HDS', 'Contracts', 'dbclient', 'HDS', 'q', 'new.xml')).toBe('<q/>');
    expect(read('contracts', 'dbclient', 'HDS', 'q', 'new.xml')).toBe('<q/>');
    expect(leftovers()).toEqual([]);
  });

  it('writes a wwwroot file to modules/<moduleID>/wwwroot/<moduleID> only', async () => {
    const { url } = await start();
    const res = await contractSync(
      url,
      { moduleID: 'myapp', contractType: 'wwwroot', destFilePath: '/js/app.js', changeType: 'Created' },
      'app()',
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as SyncAnswer).targets).toEqual([
      { path: under('modules', 'myapp', 'wwwroot', 'myapp', 'js', 'app.js'), existed: false },
    ]);
    expect(read('modules', 'myapp', 'wwwroot', 'myapp', 'js', 'app.js')).toBe('app()');
    expect(fs.existsSync(under('contracts', 'wwwroot'))).toBe(false);
  });

  it('removes both targets on Deleted', async () => {
    const { url } = await start();
    const res = await contractSync(url, {
      moduleID: 'HDS',
      contractType: 'transact',
      destFilePath: 'HDS/old.json',
      changeType: 'Deleted',
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as SyncAnswer).targets.map((t) => t.existed)).toEqual([true, true]);
    expect(fs.existsSync(under('modules', 'HDS', 'Contracts', 'transact', 'HDS', 'old.json'))).toBe(false);
    expect(fs.existsSync(under('contracts', 'transact', 'HDS', 'old.json'))).toBe(false);
  });

  it('writes neither target when the second cannot take the file', async () => {
    const { url } = await start();
    fs.mkdirSync(under('contracts', 'transact', 'HDS', 'clash.json'), { recursive: true });
    const res = await contractSync(
      url,
      { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS/clash.json', changeType: 'Created' },
      'x',
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'contractsync.not_a_file' });
    expect(fs.existsSync(under('modules', 'HDS', 'Contracts', 'transact', 'HDS', 'clash.json'))).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('answers 400 with nothing written for a moduleID or destFilePath that escapes, and for bad fields', async () => {
    const { url } = await start();
    const before = fs.readdirSync(home!.home, { recursive: true }).length;
    const cases: Array<[SyncFields, string]> = [
      [
        { moduleID: '..', contractType: 'transact', destFilePath: 'x.json', changeType: 'Created' },
        'contractsync.invalid_module_id',
      ],
      [
        { moduleID: '../../etc', contractType: 'transact', destFilePath: 'x.json', changeType: 'Created' },
        'contractsync.invalid_module_id',
      ],
      [
        { moduleID: 'a/b', contractType: 'transact', destFilePath: 'x.json', changeType: 'Created' },
        'contractsync.invalid_module_id',
      ],
      [
        { moduleID: 'HDS', contractType: 'transact', destFilePath: '../../../x.json', changeType: 'Created' },
        'contractsync.invalid_path',
      ],
      [
        { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS\\..\\..\\x.json', changeType: 'Created' },
        'contractsync.invalid_path',
      ],
      [
        { moduleID: 'HDS', contractType: 'transact', destFilePath: 'C:\\x.json', changeType: 'Created' },
        'contractsync.invalid_path',
      ],
      [
        { moduleID: 'HDS', contractType: 'wwwroot', destFilePath: '//server/share/x.js', changeType: 'Created' },
        'contractsync.invalid_path',
      ],
      [
        { moduleID: 'HDS', contractType: 'transact', destFilePath: '..', changeType: 'Deleted' },
        'contractsync.invalid_path',
      ],
      [
        { moduleID: 'HDS', contractType: 'nosuch', destFilePath: 'x.json', changeType: 'Created' },
        'contractsync.invalid_contract_type',
      ],
      [
        { moduleID: 'HDS', contractType: 'transact', destFilePath: 'x.json', changeType: 'Renamed' },
        'contractsync.invalid_change_type',
      ],
      [{ contractType: 'transact', destFilePath: 'x.json', changeType: 'Created' }, 'contractsync.missing_field'],
    ];
    for (const [fields, code] of cases) {
      const res = await contractSync(url, fields, 'escaped');
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(await res.json()).toMatchObject({ code });
    }
    const noFile = await contractSync(url, {
      moduleID: 'HDS',
      contractType: 'transact',
      destFilePath: 'x.json',
      changeType: 'Created',
    });
    expect(await noFile.json()).toMatchObject({ status: 400, code: 'contractsync.missing_file' });
    expect(fs.readdirSync(home!.home, { recursive: true }).length).toBe(before);
    expect(fs.existsSync(path.join(path.dirname(home!.home), 'x.json'))).toBe(false);
  });

  it('refuses a target reached through a symlink that points out of the home', async () => {
    const { url } = await start();
    const outside = fs.mkdtempSync(path.join(path.dirname(home!.home), 'ack-outside-'));
    try {
      fs.symlinkSync(outside, under('modules', 'evil'));
      const res = await contractSync(
        url,
        { moduleID: 'evil', contractType: 'wwwroot', destFilePath: 'x.js', changeType: 'Created' },
        'escaped',
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'contractsync.invalid_path' });
      expect(fs.readdirSync(outside)).toEqual([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('answers 413 over MaxContractSyncFileBytes and keeps both old files', async () => {
    const { url } = await start();
    const res = await contractSync(
      url,
      { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS/old.json', changeType: 'Changed' },
      Buffer.alloc(2049),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'contractsync.file_too_large' });
    expect(read('modules', 'HDS', 'Contracts', 'transact', 'HDS', 'old.json')).toBe('old module copy');
    expect(read('contracts', 'transact', 'HDS', 'old.json')).toBe('old shared copy');
    expect(leftovers()).toEqual([]);
  });
});

describe('contract sync paths the file system refuses', () => {
  it('answers 409 when a file stands where destFilePath needs a folder, writing neither target', async () => {
    const { url } = await start();
    const res = await contractSync(
      url,
      { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS/old.json/inner.json', changeType: 'Created' },
      'x',
      { hostAccessID: KEY },
    );
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'request.path_conflict' });
    expect(read('modules', 'HDS', 'Contracts', 'transact', 'HDS', 'old.json')).toBe('old module copy');
    expect(read('contracts', 'transact', 'HDS', 'old.json')).toBe('old shared copy');
    expect(fs.existsSync(under('contracts', 'transact', 'HDS', 'old.json', 'inner.json'))).toBe(false);
  });

  it('publishes one contract change naming the files it wrote or removed to every subscribed module, even when one listener throws', async () => {
    const events: ContractChangeEvent[] = [];
    home = hosts.home(
      testAppSettings({
        AppSettings: { LoadModules: ['noisy', 'listener'], UseContractSync: true, HostAccessID: KEY },
      }),
      {
        'modules/noisy/module.json': { ModuleID: 'noisy' },
        'modules/listener/module.json': { ModuleID: 'listener' },
      },
    );
    const { url } = await hosts.start(home, {
      noisy: (ctx) => {
        ctx.host.contractChanges.subscribe(() => {
          throw new Error('listener bug');
        });
        return {};
      },
      listener: (ctx) => {
        ctx.host.contractChanges.subscribe((event) => events.push(event));
        return {};
      },
    });
    expect(
      (
        await contractSync(
          url,
          { moduleID: 'HDS', contractType: 'transact', destFilePath: 'HDS/new.json', changeType: 'Created' },
          '{}',
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await contractSync(url, {
          moduleID: 'HDS',
          contractType: 'transact',
          destFilePath: 'HDS/new.json',
          changeType: 'Deleted',
        })
      ).status,
    ).toBe(200);
    const files = [under('modules/HDS/Contracts/transact/HDS/new.json'), under('contracts/transact/HDS/new.json')];
    expect(events).toEqual([
      { moduleId: 'HDS', contractType: 'transact', changeType: 'Created', files },
      { moduleId: 'HDS', contractType: 'transact', changeType: 'Deleted', files },
    ]);
  });
});
