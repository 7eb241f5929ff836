import { describe, expect, it } from 'vitest';
import type { AckModuleFactory, ContractChange, ContractChangeEvent } from '@ack/host';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth, syncUpload } from '../test-support/test-fixture.js';

const TOKEN = 'refresh-token';
const AUTH = basicAuth(TOKEN);
const hosts = useTestHosts();

/**
 * `transact` as a module of this host: it has both a refresh hook and the original's refresh route,
 * and records which one it was told through, and the contract changes it heard.
 */
type HookBehaviour = 'ok' | 'fail' | 'hang';

type Seen = { hook: ContractChange[]; route: string[]; heard?: ContractChangeEvent[] };

function transactModule(seen: Seen, behaviour: HookBehaviour): AckModuleFactory {
  return (ctx) => {
    ctx.host.contractChanges.subscribe((event) => seen.heard?.push(event));
    const router = ctx.host.createRouter();
    router.get('/transaction/refresh', (req, res) => {
      seen.route.push(String(req.query.filePath));
      res.json(true);
    });
    return {
      routes: [{ mount: '/transact/api', handler: router }],
      refreshContract(change) {
        seen.hook.push(change);
        if (behaviour === 'fail') throw new Error('contract cache is busy');
        if (behaviour === 'hang') return new Promise<void>(() => {});
      },
    };
  };
}

async function start(seen: Seen, behaviour: HookBehaviour = 'ok') {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot', 'transact'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], SyncRefreshTimeoutMs: 500 },
    },
    'modules/transact/module.json': { ModuleID: 'transact' },
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule, transact: transactModule(seen, behaviour) });
  let requests = 0;
  running.host.server.on('request', () => requests++);
  return { url: running.url, requests: () => requests };
}

describe('sync refresh of a module loaded in this host', () => {
  it('calls its refresh hook in process, with no request to its refresh route', async () => {
    const seen = { hook: [] as ContractChange[], route: [] as string[], heard: [] as ContractChangeEvent[] };
    const { url, requests } = await start(seen);
    const res = await syncUpload(
      url,
      TOKEN,
      { moduleName: 'transact', changeType: 'Created', filePath: 'HDS/ZZW/TST010.json' },
      '{"a":1}',
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ module: 'transact', refresh: { ok: true, via: 'hook' } });
    expect(seen.hook).toEqual([{ changeType: 'Created', filePath: 'HDS/ZZW/TST010.json' }]);
    // The one contract change, as every subscriber hears it: the file written, by its absolute path.
    expect(seen.heard).toEqual([
      {
        moduleId: 'transact',
        changeType: 'Created',
        filePath: 'HDS/ZZW/TST010.json',
        files: [expect.stringMatching(/\/contracts\/transact\/HDS\/ZZW\/TST010\.json$/)],
      },
    ]);

    const refresh = await fetch(
      `${url}/wwwroot/api/sync/refresh?moduleName=transact&changeType=Changed&filePath=HDS/ZZW/TST010.json`,
      { headers: { Authorization: AUTH } },
    );
    expect(refresh.status).toBe(200);
    expect(await refresh.json()).toMatchObject({ module: 'transact', refresh: { ok: true, via: 'hook' } });
    expect(seen.hook[1]).toEqual({ changeType: 'Changed', filePath: 'HDS/ZZW/TST010.json' });

    // Only the two requests this test made reached the server: no loopback call.
    expect(seen.route).toEqual([]);
    expect(requests()).toBe(2);
  });

  it.each([
    ['throws', 'fail', 'sync.refresh_failed'],
    ['does not finish within SyncRefreshTimeoutMs', 'hang', 'sync.refresh_timeout'],
  ] as const)('answers 502 when the hook %s', async (_case, behaviour, code) => {
    const seen = { hook: [] as ContractChange[], route: [] as string[] };
    const { url } = await start(seen, behaviour);
    const refresh = await fetch(
      `${url}/wwwroot/api/sync/refresh?moduleName=transact&changeType=Changed&filePath=HDS/a.json`,
      { headers: { Authorization: AUTH } },
    );
    expect(refresh.status).toBe(502);
    expect(await refresh.json()).toMatchObject({ code, module: 'transact' });
    expect(seen.hook).toHaveLength(1);
    expect(seen.route).toEqual([]);
  });
});
