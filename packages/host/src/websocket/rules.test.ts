import { describe, expect, it } from 'vitest';
import { createUpgradeDecider, isSameOrigin } from './rules.js';

describe('isSameOrigin', () => {
  it('compares scheme, host name and port, with default ports', () => {
    expect(isSameOrigin('http://127.0.0.1:8421', '127.0.0.1:8421', 'http')).toBe(true);
    expect(isSameOrigin('https://app.example.org', 'app.example.org:443', 'https')).toBe(true);
    expect(isSameOrigin('http://[::1]:8421', '[::1]:8421', 'http')).toBe(true);
    expect(isSameOrigin('https://127.0.0.1:8421', '127.0.0.1:8421', 'http')).toBe(false);
    expect(isSameOrigin('http://127.0.0.1:8422', '127.0.0.1:8421', 'http')).toBe(false);
    expect(isSameOrigin('http://evil.example', 'app.example.org', 'http')).toBe(false);
    expect(isSameOrigin('null', 'app.example.org', 'http')).toBe(false);
    expect(isSameOrigin('http://app.example.org', undefined, 'http')).toBe(false);
  });
});

describe('upgrade decision', () => {
  const decide = createUpgradeDecider({
    paths: new Set(['/s']),
    ipAllowed: () => true,
    withOrigins: ['https://*.example.org'],
    maxUpgraded: 1,
  });
  const facts = {
    path: '/s',
    clientIp: '127.0.0.1',
    protocol: 'http' as const,
    origin: undefined,
    host: 'h:1',
    upgrade: 'websocket',
  };

  it('checks path, upgrade, origin, shut-down and capacity in that order', () => {
    expect(decide(facts, 0, false)).toEqual({ ok: true });
    expect(decide({ ...facts, origin: 'https://a.example.org' }, 0, false)).toEqual({ ok: true });
    const code = (v: ReturnType<typeof decide>) => (v.ok ? 'ok' : v.problem.code);
    expect(code(decide({ ...facts, path: '/t' }, 0, false))).toBe('websocket.not_found');
    expect(code(decide({ ...facts, upgrade: 'h2c' }, 0, false))).toBe('websocket.bad_upgrade');
    expect(code(decide({ ...facts, origin: 'https://example.org.evil.test' }, 0, false))).toBe(
      'websocket.origin_not_allowed',
    );
    expect(code(decide(facts, 0, true))).toBe('websocket.shutting_down');
    expect(code(decide(facts, 1, false))).toBe('websocket.too_many_connections');
  });
});
