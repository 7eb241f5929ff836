import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, rawConnection, testAppSettings, useTestHosts } from '../../test-support/index.js';
import { createHostFilter, hostName } from './host-filter.js';

// AllowedHosts (docs/configuration.md "AllowedHosts", docs/pipeline.md "Host header"):
// `*.example.com` allows every sub-domain of example.com and not example.com itself; names are
// compared ignoring case and without the port. A name that merely ends in the same letters
// (`evilexample.com`) is another site: answering it would let DNS rebinding through.
const hosts = useTestHosts();

async function startWith(allowedHosts: string) {
  const home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['probe'] }, AllowedHosts: allowedHosts }),
    moduleFiles(['probe']),
  );
  const { url } = await hosts.start(home, { probe: probeModule() });
  return async (host: string) => {
    const c = await rawConnection(url);
    c.write(`GET /probe-public HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    await c.closedWithin(10_000);
    return c.text;
  };
}

const refused = (reply: string, host: string) => {
  expect(reply, host).toMatch(/^HTTP\/1\.1 400/);
  expect(reply, host).toContain('request.host_not_allowed');
};

describe('AllowedHosts sub-domain wildcards over HTTP', () => {
  it('answers sub-domains of *.example.com and refuses look-alikes, with or without a port, in any case', async () => {
    const get = await startWith('*.example.com');
    for (const host of [
      'a.example.com',
      'deep.a.example.com',
      'a.example.com:8421',
      'A.EXAMPLE.COM',
      'a.Example.Com:1',
    ])
      expect(await get(host), host).toMatch(/^HTTP\/1\.1 200/);
    for (const host of [
      'evilexample.com', // the dot of the wildcard matters
      'evilexample.com:8421',
      'EVILEXAMPLE.COM',
      'example.com', // the wildcard is for sub-domains only
      'example.com:8421',
      'EXAMPLE.COM',
      'a.example.com.evil.net', // the allowed name as a prefix of another site
      'a.example.com.evil.net:8421',
      'a.example.co',
      'a.example.comm',
      'a-example.com',
    ])
      refused(await get(host), host);
  });

  it('keeps exact names exact next to a wildcard', async () => {
    const get = await startWith('localhost;*.example.com');
    for (const host of ['localhost', 'LocalHost:8080']) expect(await get(host), host).toMatch(/^HTTP\/1\.1 200/);
    for (const host of ['localhos', 'xlocalhost', 'localhost.evil.net', 'localhost.example'])
      refused(await get(host), host);
  });
});

describe('the host filter', () => {
  it('matches a wildcard only at a label boundary', () => {
    const filter = createHostFilter(' *.Example.COM ; localhost ');
    expect(filter.open).toBe(false);
    expect(filter.allows('a.example.com')).toBe(true);
    expect(filter.allows('x.EXAMPLE.com:80')).toBe(true);
    expect(filter.allows('evilexample.com')).toBe(false);
    expect(filter.allows('example.com')).toBe(false);
    expect(filter.allows('.example.com')).toBe(false); // an empty label is no sub-domain
    expect(filter.allows('a.example.com.evil.net')).toBe(false);
    expect(filter.allows('LOCALHOST')).toBe(true);
    expect(filter.allows('localhost:')).toBe(true);
    expect(filter.allows('alocalhost')).toBe(false);
  });

  it('lets a request without a Host through (HTTP/1.0), and is open for * or an empty setting', () => {
    expect(createHostFilter('localhost').allows(undefined)).toBe(true);
    expect(createHostFilter('localhost').allows('')).toBe(true);
    for (const setting of ['*', '', ' ; ', 'localhost;*']) {
      const filter = createHostFilter(setting);
      expect(filter.open, setting).toBe(true);
      expect(filter.allows('anything.test'), setting).toBe(true);
    }
  });

  it('compares bracketed IPv6 hosts without their port', () => {
    const filter = createHostFilter('[::1]');
    expect(filter.allows('[::1]:8421')).toBe(true);
    expect(filter.allows('[::1]')).toBe(true);
    expect(filter.allows('[::2]:8421')).toBe(false);
    expect(hostName('[::1]:80')).toBe('[::1]');
    expect(hostName('[::1')).toBe('[::1');
    expect(hostName('a.example:8421')).toBe('a.example');
    expect(hostName('a.example')).toBe('a.example');
  });
});
