import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import { startSignInHost } from '../test-support/sign-in-fixture.js';

/** The sample's fixed assets answer conditional GETs as the static files do (RFC 9110 §13.1.2). */
describe('htmx sample assets: If-None-Match', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startSignInHost();
  });
  afterAll(() => t.close());

  it('answers 304 to `*`, to a list holding the ETag and to its weak form; 200 to another tag', async () => {
    for (const asset of ['htmx.min.js', 'contacts.css']) {
      const url = `${t.url}/wwwroot/api/htmx/${asset}`;
      const first = await fetch(url);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"/);
      for (const inm of [etag, '*', `"other", ${etag}`, `W/${etag}`]) {
        expect((await fetch(url, { headers: { 'If-None-Match': inm } })).status, `${asset} ${inm}`).toBe(304);
      }
      const other = await fetch(url, { headers: { 'If-None-Match': '"other"' } });
      expect(other.status).toBe(200);
      expect((await other.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });
});
