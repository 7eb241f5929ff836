import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import {
  cookieHeader,
  setCookies,
  cookieValue,
  DEV_SIGN_IN,
  postJson,
  startSignInHost,
} from '../test-support/sign-in-fixture.js';

const API = '/wwwroot/api/index';

const getJson = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as any, res };
};

describe('index helper APIs', () => {
  let t: TestHost;
  let origin: string;
  beforeAll(async () => {
    t = await startSignInHost({ appSettings: { WithOrigins: ['http://screens.example:8080', 'https://app.example'] } });
    origin = 'http://screens.example:8080';
  });
  afterAll(() => t.close());

  it('GET / answers the module name', async () => {
    const res = await fetch(`${t.url}${API}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('wwwroot');
  });

  it('id gives time-ordered, distinct ids; count and hasSplits are checked', async () => {
    const one = await getJson(`${t.url}${API}/id`);
    expect(one.status).toBe(200);
    expect(one.body).toHaveLength(1);
    expect(one.body[0]).toMatch(/^[0-9a-f]{32}$/);
    const many = await getJson(`${t.url}${API}/id?count=1000&hasSplits=true`);
    expect(many.body).toHaveLength(1000);
    expect(new Set(many.body).size).toBe(1000);
    expect([...many.body].sort()).toEqual(many.body);
    expect(many.body[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const later = await getJson(`${t.url}${API}/id?count=1`);
    expect(later.body[0] > many.body[999].replace(/-/g, '')).toBe(true);
    for (const q of [
      'count=0',
      'count=1001',
      'count=-1',
      'count=1.5',
      'count=abc',
      'count=1&count=2',
      'count=',
      'count=99999999999',
      'hasSplits=maybe',
    ]) {
      const bad = await getJson(`${t.url}${API}/id?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.res.headers.get('content-type')).toMatch(/problem\+json/);
    }
  });

  it('guid and sha256hash', async () => {
    const guid = await getJson(`${t.url}${API}/guid`);
    expect(guid.body).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const text = 'héllo wörld & more';
    const hash = await getJson(`${t.url}${API}/sha256hash?${new URLSearchParams({ text })}`);
    expect(hash.body).toBe(crypto.createHash('sha256').update(text, 'utf8').digest('hex'));
    expect((await getJson(`${t.url}${API}/sha256hash?text=`)).body).toBe(
      crypto.createHash('sha256').update('').digest('hex'),
    );
    expect((await getJson(`${t.url}${API}/sha256hash`)).status).toBe(400);
    expect((await getJson(`${t.url}${API}/sha256hash?text=a&text=b`)).status).toBe(400);
  });

  it('encode-no and decode-no round-trip with Sqids (min length 8) and refuse bad input', async () => {
    const enc = await getJson(`${t.url}${API}/encode-no?numbers=1,2,3`);
    expect(enc.status).toBe(200);
    expect(enc.body.length).toBeGreaterThanOrEqual(8);
    expect(enc.body).toMatch(/^[a-z0-9]+$/);
    const dec = await getJson(`${t.url}${API}/decode-no?hash=${enc.body}`);
    expect(dec.body).toEqual([1, 2, 3]);
    const big = await getJson(`${t.url}${API}/encode-no?numbers=${Number.MAX_SAFE_INTEGER},0`);
    expect((await getJson(`${t.url}${API}/decode-no?hash=${big.body}`)).body).toEqual([Number.MAX_SAFE_INTEGER, 0]);
    for (const q of [
      'numbers=',
      'numbers=a',
      'numbers=-1',
      'numbers=1.5',
      'numbers=1,,2',
      `numbers=${Number.MAX_SAFE_INTEGER + 2}`,
      'numbers=99999999999999999999',
      `numbers=${Array(101).fill(1).join(',')}`,
      'numbers=1&numbers=2',
    ]) {
      const bad = await getJson(`${t.url}${API}/encode-no?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.body.code).toBe('index.invalid_numbers');
    }
    for (const q of ['hash=', 'hash=ABC!', 'hash=%E2%82%AC%E2%82%AC', `hash=${enc.body}X`, '']) {
      const bad = await getJson(`${t.url}${API}/decode-no?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.body.code).toBe('index.invalid_hash');
    }
  });

  it('create-id only for callers from WithOrigins; the id is kept for fromMinutes', async () => {
    const ok = await getJson(`${t.url}${API}/create-id?fromMinutes=5`, { headers: { origin } });
    expect(ok.status).toBe(200);
    expect(ok.body.requestID).toMatch(/^[0-9a-f]{32}$/);
    const minutes = (Date.parse(ok.body.expiresAt) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(4.9);
    expect(minutes).toBeLessThanOrEqual(5);
    expect((await getJson(`${t.url}${API}/check-id?requestID=${ok.body.requestID}`)).body).toMatchObject({
      valid: true,
      expiresAt: ok.body.expiresAt,
    });
    expect((await getJson(`${t.url}${API}/check-id?requestID=${'0'.repeat(32)}`)).body).toMatchObject({ valid: false });

    const byReferer = await getJson(`${t.url}${API}/create-id`, {
      method: 'POST',
      headers: { referer: 'https://app.example/screens/a.html?x=1' },
    });
    expect(byReferer.status).toBe(200);
    const byJson = await getJson(`${t.url}${API}/create-id`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ fromMinutes: 60 }),
    });
    expect(byJson.status).toBe(200);
    expect((Date.parse(byJson.body.expiresAt) - Date.now()) / 60_000).toBeGreaterThan(59.9);

    const refusedOrigins: Array<Record<string, string>> = [
      {},
      { origin: 'http://evil.example' },
      { origin: 'http://screens.example:8081' },
      { origin: 'null' },
      { referer: 'http://evil.example/http://screens.example:8080' },
      { origin: 'http://evil.example', referer: `${origin}/x` },
    ];
    for (const headers of refusedOrigins) {
      const refused = await getJson(`${t.url}${API}/create-id`, { headers });
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(refused.body.code).toBe('index.origin_not_allowed');
    }
    for (const q of ['fromMinutes=0', 'fromMinutes=1441', 'fromMinutes=x', 'fromMinutes=1.5']) {
      expect((await getJson(`${t.url}${API}/create-id?${q}`, { headers: { origin } })).status, q).toBe(400);
    }
  });

  it('create-id without CreateIDPolicy is not rate limited', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => fetch(`${t.url}${API}/create-id`, { headers: { origin } })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(30).fill(200));
  });

  it('anti-forgery token: issue, then validate by header or form field; mismatches and forgeries fail', async () => {
    const issued = await getJson(`${t.url}${API}/get-anti-forgery-token`);
    expect(issued.status).toBe(200);
    const cookie = setCookies(issued.res).get('tst.XSRF-TOKEN')!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const token = issued.body.token as string;
    expect(cookieValue(cookie)).toBe(token);
    const jar = cookieHeader(issued.res);

    expect(
      (await getJson(`${t.url}${API}/validate-token`, { headers: { cookie: jar, 'X-CSRF-TOKEN': token } })).body,
    ).toEqual({ valid: true });
    const form = await getJson(`${t.url}${API}/validate-token`, {
      method: 'POST',
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ __RequestVerificationToken: token }).toString(),
    });
    expect(form.body).toEqual({ valid: true });

    const other = await getJson(`${t.url}${API}/get-anti-forgery-token`);
    const forgedSig = `${token.split('.')[0]}.${crypto.randomBytes(32).toString('base64url')}`;
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'X-CSRF-TOKEN': token }, 'missing_cookie'],
      [{ cookie: jar }, 'missing_token'],
      [{ cookie: jar, 'X-CSRF-TOKEN': other.body.token }, 'mismatch'],
      [{ cookie: `tst.XSRF-TOKEN=${forgedSig}`, 'X-CSRF-TOKEN': forgedSig }, 'bad_signature'],
    ];
    for (const [headers, reason] of cases) {
      const res = await getJson(`${t.url}${API}/validate-token`, { headers });
      expect(res.status, reason).toBe(400);
      expect(res.body).toMatchObject({ code: 'index.invalid_antiforgery_token', reason });
    }

    // Bound to the user: a token issued anonymously does not pass for a signed-in user.
    const signIn = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'u1' });
    const both = `${jar}; ${cookieHeader(signIn)}`;
    expect(
      (await getJson(`${t.url}${API}/validate-token`, { headers: { cookie: both, 'X-CSRF-TOKEN': token } })).body
        .reason,
    ).toBe('bad_signature');
  });
});

describe('create-id with CreateIDPolicy enabled', () => {
  it('allows PermitLimit ids per window and client, then 429 with Retry-After', async () => {
    const t = await startSignInHost({
      appSettings: { WithOrigins: ['http://screens.example'] },
      moduleConfig: { CreateIDPolicy: { IsEnabled: true, PermitLimit: 3, WindowSeconds: 60 } },
    });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 5; i++) {
        last = await fetch(`${t.url}${API}/create-id`, { headers: { origin: 'http://screens.example' } });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await last!.json()) as { code: string }).code).toBe('index.create_id_rate_limited');
      // The origin check still comes first.
      expect((await fetch(`${t.url}${API}/create-id`, { headers: { origin: 'http://evil.example' } })).status).toBe(
        403,
      );
    } finally {
      await t.close();
    }
  });
});

/** A fake business server: records what it receives and answers as `mode` says. */
function startBusinessServer() {
  const received: Array<{ headers: http.IncomingHttpHeaders; body: any; url: string }> = [];
  let mode: 'success' | 'nack' | 'exception' | 'http500' | 'hang' | 'notjson' | 'leak' = 'success';
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ headers: req.headers, body, url: req.url ?? '' });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      };
      if (mode === 'hang') return void hanging.push(res);
      if (mode === 'http500') return send(500, { acknowledge: 0, exceptionText: 'database is down' });
      if (mode === 'notjson') return send(200, '<html>oops</html>');
      if (mode === 'leak') {
        // An upstream that echoes its own configuration in the error text.
        const self = `http://svc:s3cret-pw@${req.headers.host}${req.url}`;
        return send(500, {
          acknowledge: 0,
          exceptionText: `Server=db;User ID=sa;Password=hunter2; failed, called as ${self} from http://${req.headers.host}`,
        });
      }
      if (mode === 'nack')
        return send(200, { acknowledge: 0, exceptionText: 'TST010 business rule violated', result: { dataSet: [] } });
      if (mode === 'exception') {
        return send(200, {
          acknowledge: 1,
          result: { dataSet: [{ id: 'HasException', value: { ErrorMessage: 'Ok|Completed|SQL error near FROM' } }] },
        });
      }
      const inputs = body.payLoad.dataMapSet[0] as Array<{ id: string; value: unknown }>;
      send(200, {
        acknowledge: 1,
        exceptionText: null,
        message: { responseStatus: 'OK', mainCode: '', mainText: '', additions: [] },
        result: {
          dataSet: [
            { id: 'FormData0', value: { Echo: inputs.find((i) => i.id === 'Name')?.value, Count: 2 } },
            { id: 'GridData0', value: [{ Row: 1 }, { Row: 2 }] },
            { id: 'Empty1', value: null },
          ],
        },
      });
    });
  });
  return new Promise<{ url: string; received: typeof received; setMode(m: typeof mode): void; close(): Promise<void> }>(
    (resolve) => {
      server.listen(0, '127.0.0.1', () => {
        const port = (server.address() as AddressInfo).port;
        resolve({
          url: `http://127.0.0.1:${port}/transact/api/transaction/execute`,
          received,
          setMode: (m) => void (mode = m),
          close: () =>
            new Promise<void>((r) => {
              for (const res of hanging) res.destroy();
              server.closeAllConnections();
              server.close(() => r());
            }),
        });
      });
    },
  );
}

describe('direct-transaction wrapper', () => {
  let t: TestHost;
  let business: Awaited<ReturnType<typeof startBusinessServer>>;
  const KEY = 'module-key-for-tests';
  const call = (body: unknown, headers: Record<string, string> = {}) =>
    getJson(`${t.url}${API}/transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const command = { commandID: 'HDS|ZZW|TST010|GD01', inputs: [{ Name: 'Kim', Age: 30, Active: true, Note: null }] };

  beforeAll(async () => {
    business = await startBusinessServer();
    t = await startSignInHost({
      appSettings: { SystemID: 'SYS1', HostName: 'HOSTA', RunningEnvironment: 'D' },
      moduleConfig: { BusinessServerUrl: business.url, AuthorizationKey: KEY, BusinessServerTimeout: '00:00:00.500' },
    });
  });
  afterAll(async () => {
    await t.close();
    await business.close();
  });

  it('sends the original transaction request and answers FormData0 / GridData0', async () => {
    business.setMode('success');
    const before = business.received.length;
    const res = await call(command, { AuthorizationKey: KEY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ FormData0: { Echo: 'Kim', Count: 2 }, GridData0: [{ Row: 1 }, { Row: 2 }], Empty1: '' });

    expect(business.received.length).toBe(before + 1);
    const sent = business.received.at(-1)!;
    expect(sent.url).toBe('/transact/api/transaction/execute');
    expect(sent.headers['content-type']).toMatch(/application\/json/);
    expect(sent.headers.authorizationkey).toBeUndefined(); // the caller's key is not passed on
    const b = sent.body;
    expect(b).toMatchObject({
      action: 'SYN',
      kind: 'BIZ',
      version: '001',
      environment: 'D',
      clientTag: 'SYS1|HOSTA|ack|D',
      accessToken: '',
    });
    expect(b.requestID).toMatch(/^HDSZZWTST010GD01D\d{14}[0-9A-F]{6}$/);
    expect(b.system).toMatchObject({ programID: 'HDS', moduleID: 'wwwroot', hostName: 'HOSTA' });
    expect(b.system.routes[0]).toMatchObject({ systemID: 'SYS1' });
    expect(b.interface).toMatchObject({ interfaceID: 'S', sourcePort: 0 });
    expect(b.transaction).toMatchObject({
      globalID: b.requestID,
      businessID: 'ZZW',
      transactionID: 'TST010',
      functionID: 'GD01',
      screenID: 'TST010',
      simulationType: 'N',
      dataFormat: 'J',
      compressionYN: 'N',
    });
    expect(b.payLoad.dataMapCount).toEqual([1]);
    expect(b.payLoad.dataMapSet).toEqual([
      [
        { id: 'Name', value: 'Kim' },
        { id: 'Age', value: 30 },
        { id: 'Active', value: true },
        { id: 'Note', value: null },
      ],
    ]);
  });

  it('works for a signed-in user (operatorID is the user) and refuses everyone else with 401', async () => {
    business.setMode('success');
    const signIn = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'operator7' });
    const ok = await call(command, { cookie: cookieHeader(signIn) });
    expect(ok.status).toBe(200);
    expect(business.received.at(-1)!.body.transaction.operatorID).toBe('operator7');

    const before = business.received.length;
    const refusedCallers: Array<Record<string, string>> = [
      {},
      { AuthorizationKey: 'wrong' },
      { AuthorizationKey: `${KEY}x` },
      { AuthorizationKey: '' },
      { cookie: 'tst.Member=eyJVc2VySUQiOiJ4In0=' },
    ];
    for (const headers of refusedCallers) {
      const res = await call(command, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.code).toBe('index.transaction_unauthorized');
    }
    // Refused before the body is read, even an invalid one.
    expect((await call('{not json')).status).toBe(401);
    expect(business.received.length).toBe(before);
  });

  it('checks the request body: 400 for a bad commandID or inputs, 415 for non-JSON', async () => {
    for (const body of [
      {},
      { commandID: 'A|B|C' },
      { commandID: 'A|B|C|D|E' },
      { commandID: 'A|B|C|' },
      { commandID: 'A|B|../x|D' },
      { commandID: 5 },
      { commandID: 'A|B|C|D', inputs: {} },
      { commandID: 'A|B|C|D', inputs: [1] },
      { commandID: 'A|B|C|D', inputs: [{ a: { nested: 1 } }] },
      '[]',
      '{bad',
    ]) {
      const res = await call(body, { AuthorizationKey: KEY });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const form = await getJson(`${t.url}${API}/transaction`, {
      method: 'POST',
      headers: { AuthorizationKey: KEY, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(form.status).toBe(415);
  });

  const failures: Array<['nack' | 'exception' | 'http500' | 'hang' | 'notjson', RegExp]> = [
    ['nack', /TST010 business rule violated/],
    ['exception', /SQL error near FROM/],
    ['http500', /HTTP 500.*database is down/],
    ['hang', /did not answer within 500 ms/],
    ['notjson', /not answer with a JSON object/],
  ];
  for (const [mode, message] of failures) {
    it(`answers 502 with the upstream's message when the business server ${mode === 'hang' ? 'hangs' : `answers ${mode}`}`, async () => {
      business.setMode(mode);
      const res = await call(command, { AuthorizationKey: KEY });
      expect(res.status).toBe(502);
      expect(res.res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.code).toBe('index.transaction_failed');
      expect(res.body.detail).toMatch(message);
    });
  }

  it('the guessable default key (SystemID + RunningEnvironment + HostName) opens nothing', async () => {
    const plain = await startSignInHost({
      appSettings: { SystemID: 'SYS1', HostName: 'HOSTA' },
      moduleConfig: { BusinessServerUrl: business.url },
    });
    try {
      for (const key of ['SYS1DHOSTA', '']) {
        const res = await getJson(`${plain.url}${API}/transaction`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', AuthorizationKey: key },
          body: JSON.stringify(command),
        });
        expect(res.status, key).toBe(401);
      }
    } finally {
      await plain.close();
    }
  });

  it('never echoes BusinessServerUrl, its credentials or a password from the upstream in the 502 detail', async () => {
    const withCredentials = business.url.replace('http://', 'http://svc:s3cret-pw@');
    const hostPort = new URL(business.url).host;
    const leaky = await startSignInHost({
      moduleConfig: { BusinessServerUrl: withCredentials, AuthorizationKey: KEY },
    });
    const down = await startSignInHost({
      moduleConfig: { BusinessServerUrl: 'http://svc:s3cret-pw@127.0.0.1:1/execute', AuthorizationKey: KEY },
    });
    try {
      business.setMode('leak');
      const before = business.received.length;
      for (const [url, reached] of [
        [leaky.url, true],
        [down.url, false],
      ] as const) {
        const res = await getJson(`${url}${API}/transaction`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', AuthorizationKey: KEY },
          body: JSON.stringify(command),
        });
        expect(res.status).toBe(502);
        const detail = String(res.body.detail);
        expect(detail).toMatch(reached ? /HTTP 500/ : /could not be reached/);
        for (const secret of ['s3cret-pw', 'hunter2', hostPort, '127.0.0.1:1', 'svc:'])
          expect(detail, detail).not.toContain(secret);
      }
      // The credentials were sent as Basic authorization, not refused.
      expect(business.received.length).toBe(before + 1);
      expect(business.received.at(-1)!.headers.authorization).toBe(
        `Basic ${Buffer.from('svc:s3cret-pw').toString('base64')}`,
      );
    } finally {
      await leaky.close();
      await down.close();
    }
  });

  it('answers 502 when the business server is not there', async () => {
    const down = await startSignInHost({
      moduleConfig: { BusinessServerUrl: 'http://127.0.0.1:1/execute', AuthorizationKey: KEY },
    });
    try {
      const res = await getJson(`${down.url}${API}/transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', AuthorizationKey: KEY },
        body: JSON.stringify(command),
      });
      expect(res.status).toBe(502);
      expect(res.body.detail).toMatch(/could not be reached/);
    } finally {
      await down.close();
    }
  });
});
