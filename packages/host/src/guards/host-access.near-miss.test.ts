import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '../test-support/index.js';
import { checkHostAccessID } from './host-access.js';

// The hostAccessID must equal AppSettings:HostAccessID or the lowercase hex SHA-256 of it, whole
// (docs/sync.md, docs/compatibility.md): a value that only starts like it, differs from it in one
// character or in case, is refused and writes nothing.
const KEY = 'team-host-key';
const KEY_SHA = createHash('sha256').update(KEY).digest('hex');
const hosts = useTestHosts();

async function startContractSync() {
  const home = hosts.home(
    // Many wrong guesses in a row: keep the failed-check throttle out of the way.
    testAppSettings({
      AppSettings: { UseContractSync: true, HostAccessID: KEY, Security: { MaxFailedAccessChecks: 1000 } },
    }),
  );
  const { url } = await hosts.start(home);
  const target = path.join(home.home, 'contracts', 'transact', 'HDS', 'a.json');
  const send = (hostAccessID: string, content = 'x') => {
    const body = new FormData();
    body.append('file', new Blob([content]), 'f');
    for (const [k, v] of Object.entries({
      moduleID: 'HDS',
      contractType: 'transact',
      destFilePath: 'HDS/a.json',
      changeType: 'Created',
    }))
      body.append(k, v);
    return fetch(`${url}/contractsync`, { method: 'POST', body, headers: { hostAccessID } });
  };
  return { send, target };
}

const change = (s: string, at: number) => s.slice(0, at) + (s[at] === 'a' ? 'b' : 'a') + s.slice(at + 1);

describe('the hostAccessID is compared whole', () => {
  it('refuses near misses of the plain key and of its SHA-256, and accepts each exactly', async () => {
    const { send, target } = await startContractSync();
    const nearMisses = [
      'team', // a prefix
      KEY.slice(0, -1),
      `${KEY}x`, // the key plus a suffix
      `x${KEY}`,
      change(KEY, KEY.length - 1), // same length, last character different
      change(KEY, 0),
      KEY.toUpperCase(), // case changed
      'Team-host-key',
      KEY_SHA.slice(0, 32), // half of the hash
      KEY_SHA.slice(0, -1),
      `${KEY_SHA}0`,
      change(KEY_SHA, KEY_SHA.length - 1),
      KEY_SHA.toUpperCase(), // the hash in upper case is not the documented form
      createHash('sha256').update(KEY.toUpperCase()).digest('hex'), // the hash of a near miss
      `${KEY}${KEY_SHA}`,
    ];
    for (const presented of nearMisses) {
      const res = await send(presented);
      expect(res.status, presented).toBe(401);
      expect(((await res.json()) as { code: string }).code, presented).toBe('contractsync.invalid_host_access_id');
    }
    expect(fs.existsSync(target)).toBe(false);

    expect((await send(KEY, 'plain')).status).toBe(200);
    expect(fs.readFileSync(target, 'utf8')).toBe('plain');
    expect((await send(KEY_SHA, 'hashed')).status).toBe(200);
    expect(fs.readFileSync(target, 'utf8')).toBe('hashed');
    // Surrounding white space is not part of a header value.
    expect((await send(` ${KEY}\t`, 'spaced')).status).toBe(200);
  });

  it('treats an empty or blank header as missing', async () => {
    const { send, target } = await startContractSync();
    for (const presented of ['', '   ']) {
      const res = await send(presented);
      expect(res.status, JSON.stringify(presented)).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('contractsync.missing_host_access_id');
    }
    expect(fs.existsSync(target)).toBe(false);
  });

  it('ignores white space around the configured key (a value pasted into an environment variable)', () => {
    expect(checkHostAccessID(`  ${KEY}\n`, KEY)).toBe('ok');
    expect(checkHostAccessID(`  ${KEY}\n`, KEY_SHA)).toBe('ok');
    expect(checkHostAccessID(`  ${KEY}\n`, `${KEY}\n`)).toBe('ok');
    expect(checkHostAccessID(KEY, [KEY_SHA, 'second'])).toBe('ok'); // a repeated header: the first counts
    expect(checkHostAccessID(KEY, ['wrong', KEY])).toBe('invalid');
    expect(checkHostAccessID(' ', KEY)).toBe('not_configured');
  });
});
