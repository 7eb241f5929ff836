import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { tokenFromAuthorization, verifySyncToken } from './basic-token.js';
import { basicAuth } from '../test-support/test-fixture.js';

// A sync token must match exactly (docs/sync.md "Credentials"): a token that only starts like the
// configured one, or differs from it in one character or in case, is a wrong token.
const hosts = useTestHosts();

async function startSync(tokens: string[]) {
  const home = hosts.home(
    // Many wrong guesses in a row: keep the failed-check throttle out of the way (token-throttle.test.ts).
    testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], Security: { MaxFailedAccessChecks: 1000 } } }),
    { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: tokens } } },
  );
  const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
  return (authorization: string) =>
    fetch(`${url}/wwwroot/api/sync/refresh?moduleName=wwwroot&changeType=Changed&filePath=HDS/x.html`, {
      headers: { authorization },
    });
}

async function expectRefused(res: Response, label: string, code = 'sync.invalid_token'): Promise<void> {
  expect(res.status, label).toBe(401);
  expect(res.headers.get('www-authenticate'), label).toBe('Basic realm="ack-sync"');
  expect(((await res.json()) as { code: string }).code, label).toBe(code);
}

describe('the sync token is compared whole', () => {
  it('accepts the exact token and refuses every near miss of it over HTTP', async () => {
    const send = await startSync(['right-token']);
    const ok = await send(basicAuth('right-token'));
    expect(ok.status).not.toBe(401);
    expect(ok.status).toBe(200);

    const nearMisses = [
      'r', // a one-character prefix
      'right-toke', // all but the last character
      'right-token2', // the token plus a suffix
      'right-token-and-more',
      'xright-token', // a prefix before it
      'right-tokem', // same length, last character different
      'aight-token', // same length, first character different
      'RIGHT-TOKEN', // case changed
      'Right-token',
      'right-tokeN',
    ];
    for (const token of nearMisses) await expectRefused(await send(basicAuth(token)), token);
    // Sent raw rather than base64-encoded (a payload that is not base64 is the token itself).
    await expectRefused(await send('Basic right-toke'), 'raw prefix');
    await expectRefused(await send('Basic right-token-x'), 'raw suffix');
    expect((await send('Basic right-token')).status, 'raw exact').toBe(200);
  });

  it('refuses an empty token as malformed, and no header at all as missing', async () => {
    const send = await startSync(['right-token']);
    await expectRefused(await send(basicAuth('')), 'empty token', 'sync.malformed_token');
    await expectRefused(await send(basicAuth('   ')), 'blank token', 'sync.malformed_token');
    await expectRefused(await send('Basic '), 'empty payload', 'sync.malformed_token');
    await expectRefused(await send('Bearer right-token'), 'another scheme', 'sync.malformed_token');
    await expectRefused(await send(''), 'empty header', 'sync.missing_token');
  });

  it('with several tokens, each is compared whole', async () => {
    const send = await startSync(['alpha-token', 'beta-token']);
    for (const token of ['alpha-token', 'beta-token']) expect((await send(basicAuth(token))).status, token).toBe(200);
    for (const token of ['alpha', 'beta-token-', 'alpha-tokenbeta-token', 'BETA-TOKEN', 'beta-tokeo'])
      await expectRefused(await send(basicAuth(token)), token);
  });

  it('reads only a whole Basic header: the scheme first, one payload, white space around it allowed', () => {
    const payload = Buffer.from('right-token:').toString('base64');
    expect(tokenFromAuthorization(`Basic ${payload}`)).toBe('right-token');
    expect(tokenFromAuthorization(`  basic   ${payload}  `)).toBe('right-token');
    expect(tokenFromAuthorization(`Basic\t${payload}`)).toBe('right-token');
    for (const header of [
      `XBasic ${payload}`,
      `NotBasic ${payload}`,
      `Basic ${payload} junk`,
      `Basic`,
      `Basic${payload}`,
    ])
      expect(tokenFromAuthorization(header), header).toBeUndefined();
  });

  it('takes a raw token as it is when it is not strict base64, even if it would decode to text', () => {
    expect(tokenFromAuthorization('Basic dG9rZW4')).toBe('dG9rZW4'); // unpadded: would decode to "token"
    expect(tokenFromAuthorization('Basic Pj4-Pw==')).toBe('Pj4-Pw=='); // URL-safe alphabet: would decode to ">>>?"
    expect(tokenFromAuthorization('Basic PD4-')).toBe('PD4-');
    expect(verifySyncToken('Basic dG9rZW4', ['token'])).toBe('invalid_token');
    expect(verifySyncToken('Basic dG9rZW4', ['dG9rZW4'])).toBe('ok');
  });

  it('takes a blank header as no token at all (which does not count as a failed check)', () => {
    expect(verifySyncToken('   ', ['right-token'])).toBe('missing_token');
    expect(verifySyncToken('', ['right-token'])).toBe('missing_token');
  });
});
