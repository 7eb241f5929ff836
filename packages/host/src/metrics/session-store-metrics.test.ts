import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, testAppSettings, testDatabases, useTestHosts } from '../test-support/index.js';

// Calls to a shared session store on /metrics, by store and outcome (docs/operations.md "The
// host's own"), on a real Redis.
const KEY = 'store-metrics-key';
const hosts = useTestHosts();

describe('session store calls on /metrics', () => {
  it('counts the Redis calls a session makes as ok', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          HostAccessID: KEY,
          SessionState: {
            CacheType: 'Redis',
            RedisConnectionString: `${testDatabases().redisConnectionString},abortConnect=false`,
            RedisKeyPrefix: `ack-test:${crypto.randomBytes(4).toString('hex')}:`,
          },
        },
      }),
      moduleFiles(['probe']),
    );
    const { url } = await hosts.start(home, { probe: probeModule() });
    const first = await fetch(`${url}/probe/api/count`);
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${url}/probe/api/count`, { headers: { Cookie: cookie } })).status).toBe(200);
    const text = await (await fetch(`${url}/metrics`, { headers: { hostAccessID: KEY } })).text();
    const ok = /^ack_session_store_call_duration_seconds_count\{store="(\w+)",outcome="ok"\} (\d+)$/m.exec(text);
    expect(ok?.[1]).toBe('Redis');
    // A save, then a read and a save: at least three calls.
    expect(Number(ok?.[2])).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^ack_session_store_call_duration_seconds_count\{store="Redis",outcome="timeout"\} 0$/m);
  });
});
