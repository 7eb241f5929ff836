import { execFileSync } from 'node:child_process';
import https from 'node:https';
import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, testAppSettings, useTestHosts, type TestHome } from '../test-support/index.js';
import type { AckHost } from '../host.js';

const hosts = useTestHosts();
let home: TestHome | undefined;

/** A self-signed certificate for 127.0.0.1, made with the openssl command (PEM pair and a PFX). */
function makeCertificate(dir: string): void {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', `${dir}/dev.key`, '-out', `${dir}/dev.crt`], { stdio: 'ignore' });
  execFileSync('openssl', ['pkcs12', '-export', '-in', `${dir}/dev.crt`, '-inkey', `${dir}/dev.key`, '-out', `${dir}/dev.pfx`, '-passout', 'pass:cert-pass'], { stdio: 'ignore' });
}

function httpsGet(url: string): Promise<{ status: number; body: string; cookie: string[] }> {
  return new Promise((resolve, reject) => {
    https.get(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, cookie: res.headers['set-cookie'] ?? [] }));
    }).on('error', reject);
  });
}

async function start(certSettings: Record<string, unknown>): Promise<AckHost> {
  home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['probe'], ...certSettings } }), moduleFiles(['probe']));
  makeCertificate(home.appDir);
  return (await hosts.start(home, { probe: probeModule() }, {}, { tlsPort: 0 })).host;
}

describe('HTTPS listener', () => {
  it('serves the same pipeline over HTTPS from a PFX certificate, beside plain HTTP', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.pfx', ServerDevCertPassword: 'cert-pass' });
    expect(h.tlsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const secure = await httpsGet(`${h.tlsUrl}/probe-public`);
    expect(secure).toMatchObject({ status: 200, body: 'public:probe' });
    expect((await fetch(`${h.url}/probe-public`)).status).toBe(200);
    // Cookies issued over HTTPS are Secure.
    const touched = await httpsGet(`${h.tlsUrl}/probe/api/touch`);
    expect(touched.cookie[0]).toMatch(/; Secure/i);
  });

  it('takes a PEM certificate and key', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' });
    expect((await httpsGet(`${h.tlsUrl}/probe-public`)).status).toBe(200);
  });

  it('serves plain HTTP only when the certificate cannot be used', async () => {
    for (const settings of [{ ServerDevCertFilePath: 'missing.pfx' }, { ServerDevCertFilePath: 'dev.pfx', ServerDevCertPassword: 'wrong' }]) {
      const h = await start(settings);
      expect(h.tlsUrl).toBe('');
      expect((await fetch(`${h.url}/probe-public`)).status).toBe(200);
      await h.close({ graceMs: 100 });
      home!.remove();
    }
  });
});
