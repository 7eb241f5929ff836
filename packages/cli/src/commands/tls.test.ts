import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { makeTestCertificate, nodeHttp2Client, useTestHosts, type TestHome } from '@ack/host/test-support';
import { runAck, startAckServe } from '../test-support/spawn-ack.js';

// TLS settings and the development certificate through the real `ack serve` and `ack dev-cert`.
// docs/protocols.md.

const hosts = useTestHosts();
const consoleOnly = { WriteTo: [{ Name: 'Console', Args: {} }] };

function tlsHome(settings: { AppSettings?: Record<string, unknown>; Kestrel?: Record<string, unknown> }): TestHome {
  const home = hosts.home({
    AppSettings: { LoadModules: [], ...settings.AppSettings },
    Kestrel: settings.Kestrel ?? {},
    Serilog: consoleOnly,
  });
  makeTestCertificate(home.appDir);
  makeTestCertificate(path.join(home.appDir, 'other'), 'other');
  return home;
}

const serveArgs = (home: TestHome) => ['serve', '--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1'];
const endpoint = (cert: Record<string, string>) => ({
  Endpoints: { Secure: { Url: 'https://127.0.0.1:0', Certificate: cert } },
});

describe('ack serve with a TLS setting that cannot be used', () => {
  const cases: Array<[string, Parameters<typeof tlsHome>[0], (dir: string) => string]> = [
    [
      'a certificate file that is not there',
      { Kestrel: endpoint({ Path: 'nope.crt', KeyPath: 'dev.key' }) },
      (dir) => `Kestrel:Endpoints:Secure:Certificate:Path: file not found: ${path.join(dir, 'nope.crt')}`,
    ],
    [
      'a key file that is not there',
      { Kestrel: endpoint({ Path: 'dev.crt', KeyPath: 'nope.key' }) },
      (dir) => `Kestrel:Endpoints:Secure:Certificate:KeyPath: file not found: ${path.join(dir, 'nope.key')}`,
    ],
    [
      'a key that does not match the certificate',
      { Kestrel: endpoint({ Path: 'dev.crt', KeyPath: 'other/other.key' }) },
      (dir) =>
        `Kestrel:Endpoints:Secure:Certificate:KeyPath: the key in ${path.join(dir, 'other/other.key')} does not match the certificate in ${path.join(dir, 'dev.crt')}`,
    ],
    [
      'a wrong PFX password',
      { Kestrel: endpoint({ Path: 'dev.pfx', Password: 'not-the-password' }) },
      (dir) => `Kestrel:Endpoints:Secure:Certificate:Password: wrong password for ${path.join(dir, 'dev.pfx')}`,
    ],
    [
      'a PEM certificate without its key',
      { Kestrel: endpoint({ Path: 'dev.crt' }) },
      (dir) => `Kestrel:Endpoints:Secure:Certificate:Path: ${path.join(dir, 'dev.crt')} is not a PFX (PKCS#12) file`,
    ],
    [
      'a wrong ServerDevCertPassword',
      { AppSettings: { ServerDevCertFilePath: 'dev.pfx', ServerDevCertPassword: 'nope' } },
      (dir) => `AppSettings:ServerDevCertPassword: wrong password for ${path.join(dir, 'dev.pfx')}`,
    ],
    [
      'an endpoint Url that is not http(s)://host:port',
      { Kestrel: { Endpoints: { Web: { Url: 'localhost:8080' } } } },
      () => 'Kestrel:Endpoints:Web:Url: expected http://host:port or https://host:port, got "localhost:8080"',
    ],
  ];
  for (const [name, settings, message] of cases) {
    it(`exits 2 for ${name}, naming the setting`, async () => {
      const home = tlsHome(settings);
      const run = await runAck(serveArgs(home));
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`ack: ${message(home.appDir)}`);
      expect(run.stderr + run.stdout).not.toContain('not-the-password');
      expect(run.stdout).not.toMatch(/listening on/);
    });
  }
});

describe('development certificate', () => {
  it('ack dev-cert writes it under <home>/.ack/dev-cert/ readable by the owner only, and keeps it unless --force', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: [] } });
    const made = await runAck(['dev-cert', '--app-dir', home.appDir]);
    expect(made.code).toBe(0);
    const dir = path.join(home.home, '.ack', 'dev-cert');
    expect(made.stdout).toContain(`development certificate created: ${path.join(dir, 'cert.pem')}`);
    expect(made.stdout).toMatch(/DNS:localhost, IP Address:127\.0\.0\.1/);
    for (const file of ['cert.pem', 'key.pem']) expect(fs.statSync(path.join(dir, file)).mode & 0o777).toBe(0o600);
    const first = new X509Certificate(fs.readFileSync(path.join(dir, 'cert.pem'))).fingerprint256;
    const again = await runAck(['dev-cert', '--app-dir', home.appDir]);
    expect(again.stdout).toContain('development certificate already there');
    expect(new X509Certificate(fs.readFileSync(path.join(dir, 'cert.pem'))).fingerprint256).toBe(first);
    await runAck(['dev-cert', '--app-dir', home.appDir, '--force']);
    expect(new X509Certificate(fs.readFileSync(path.join(dir, 'cert.pem'))).fingerprint256).not.toBe(first);
    // The repository never takes it in.
    expect(fs.readFileSync(path.resolve(import.meta.dirname, '../../../../.gitignore'), 'utf8')).toMatch(/^\.ack\/$/m);
  });

  it('ack serve --https-port makes it on first start (RunningEnvironment D) and serves HTTP/2 with it', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: [], RunningEnvironment: 'D' }, Serilog: consoleOnly });
    const served = await startAckServe([...serveArgs(home).slice(1), '--https-port', '0']);
    try {
      const url = /endpoint Https on (https:\/\/[^\s]+) \(h2, http\/1\.1\)/.exec(served.output())?.[1];
      expect(url).toBeDefined();
      expect(served.output()).toMatch(/development certificate created in .*\.ack[/\\]dev-cert/);
      const client = nodeHttp2Client(url!);
      const r = await client.send({ path: '/nothing-here' });
      expect(r).toMatchObject({ version: '2', status: 404 });
      const cert = new X509Certificate(fs.readFileSync(path.join(home.home, '.ack', 'dev-cert', 'cert.pem')));
      expect((client.session.socket as tls.TLSSocket).getPeerCertificate().fingerprint256).toBe(cert.fingerprint256);
      await client.close();
    } finally {
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
    }
  });
});
