import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, testAppSettings, useTestHosts } from '../../test-support/index.js';
import { originMatcher } from '../../guards/origin-match.js';

// WithOrigins (docs/configuration.md, docs/pipeline.md "Edge details"): the origins that get
// credentialed CORS, exactly or with `*` standing for sub-domains. A look-alike origin that got
// credentialed CORS could read a signed-in user's answers.
const hosts = useTestHosts();

describe('the WithOrigins matcher', () => {
  it('matches listed origins exactly, ignoring case and a trailing slash in the setting', () => {
    const listed = originMatcher([' https://Partner.test// ', 'http://localhost:8421', '', '   ']);
    for (const origin of ['https://partner.test', 'HTTPS://PARTNER.TEST', 'http://localhost:8421'])
      expect(listed(origin), origin).toBe(true);
    for (const origin of [
      'https://partner.test.evil',
      'https://evilpartner.test',
      'http://partner.test',
      'https://partner.test:8443',
      'https://partner.tes',
      'http://localhost',
      'http://localhost:84210',
      '',
    ])
      expect(listed(origin), origin).toBe(false);
  });

  it('lets * stand for one or more sub-domain labels, and nothing else', () => {
    const listed = originMatcher(['https://*.example.com', 'http://*.dev.test:8421']);
    for (const origin of ['https://a.example.com', 'https://b-2.a.example.com', 'http://x.dev.test:8421'])
      expect(listed(origin), origin).toBe(true);
    for (const origin of [
      'https://example.com',
      'https://evilexample.com', // the dot is literal, not "any character"
      'https://a.exampleXcom',
      'https://a.example.com.evil.net',
      'https://a.example.com:8443',
      'http://a.example.com',
      'https://a_b.example.com',
      'https://.example.com',
      'https://a..example.com',
      'http://x.dev.test:84210',
      'http://x.dev.test',
    ])
      expect(listed(origin), origin).toBe(false);
  });

  it('matches nothing when nothing is listed', () => {
    expect(originMatcher([])('http://localhost')).toBe(false);
  });
});

describe('CORS over HTTP', () => {
  async function start(publicPolicy: boolean) {
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          WithOrigins: ['https://*.partner.test'],
          Security: { EnablePublicCorsPolicy: publicPolicy },
        },
      }),
      moduleFiles(['probe']),
    );
    return (await hosts.start(home, { probe: probeModule() })).url;
  }

  it('gives credentialed CORS to a listed origin only; others get public CORS or none, and Vary: Origin', async () => {
    const url = await start(true);
    const listed = await fetch(`${url}/probe-public`, { headers: { origin: 'https://a.partner.test' } });
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://a.partner.test');
    expect(listed.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await fetch(`${url}/probe-public`, { headers: { origin: 'https://evilpartner.test' } });
    expect(other.headers.get('access-control-allow-origin')).toBe('*');
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
    const publicPreflight = await fetch(`${url}/probe-public`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evilpartner.test', 'access-control-request-method': 'DELETE' },
    });
    expect(publicPreflight.status).toBe(204);
    expect(publicPreflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(publicPreflight.headers.get('access-control-allow-methods')).toBe('GET,HEAD,PUT,PATCH,POST,DELETE');
    expect(publicPreflight.headers.get('access-control-max-age')).toBe('86400');
    const none = await fetch(`${url}/probe-public`);
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
    expect(none.headers.get('vary')).toMatch(/origin/i);

    const closed = await start(false);
    const refused = await fetch(`${closed}/probe-public`, { headers: { origin: 'https://evilpartner.test' } });
    expect(refused.status).toBe(200);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.headers.get('vary')).toMatch(/origin/i);
    const preflight = await fetch(`${closed}/probe-public`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evilpartner.test', 'access-control-request-method': 'PUT' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await fetch(`${closed}/probe-public`, {
      method: 'OPTIONS',
      headers: { origin: 'https://b.partner.test', 'access-control-request-method': 'PUT' },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET,HEAD,PUT,PATCH,POST,DELETE');
    expect(allowed.headers.get('access-control-max-age')).toBe('86400');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    // An OPTIONS that is no preflight (no Access-Control-Request-Method) goes on to the route.
    const plain = await fetch(`${closed}/probe-public`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evilpartner.test' },
    });
    expect(plain.status).not.toBe(403);
    // Only an OPTIONS is a preflight: a GET that happens to carry the header goes on too.
    const get = await fetch(`${closed}/probe-public`, {
      headers: { origin: 'https://evilpartner.test', 'access-control-request-method': 'PUT' },
    });
    expect(get.status).toBe(200);
  });
});
