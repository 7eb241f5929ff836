import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import { startSignInHost } from '../test-support/sign-in-fixture.js';

const API = '/wwwroot/api/index';

/** Input a hostile or clumsy client sends: always a 4xx problem, never a 500. */
describe('index helper APIs under hostile input', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startSignInHost();
  });
  afterAll(() => t.close());

  it('a `j:` JSON cookie is not handed to the module as an object (was a 500 in validate-token)', async () => {
    for (const value of ['j:{"a":1}', 'j:[1,2]', 'j:1', 'j:true']) {
      const res = await fetch(`${t.url}${API}/validate-token`, {
        headers: { cookie: `tst.XSRF-TOKEN=${value}`, 'X-CSRF-TOKEN': 'x' },
      });
      expect(res.status, value).toBe(400);
      const body = (await res.json()) as { code: string; reason: string };
      expect(body.code).toBe('index.invalid_antiforgery_token');
      expect(body.reason, value).toBe('missing_cookie');
    }
  });
});
