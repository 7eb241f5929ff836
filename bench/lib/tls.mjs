// One self-signed certificate (ECDSA P-256, for 127.0.0.1 and localhost) that every TLS server of
// the protocol suites presents, so they all do the same handshake work.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export function benchCertificate(work) {
  const dir = path.join(work, 'tls');
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  if (fs.existsSync(cert) && fs.existsSync(key)) return { cert, key };
  fs.mkdirSync(dir, { recursive: true });
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '7',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

/** A copy of the bench home's app folder whose settings add one `Kestrel:Endpoints` HTTPS listener. */
export function tlsAppDir(layout, { cert, key }, protocols = 'Http1AndHttp2') {
  const dir = path.join(layout.home, 'app-tls');
  fs.mkdirSync(dir, { recursive: true });
  const settings = JSON.parse(fs.readFileSync(path.join(layout.app, 'appsettings.json'), 'utf8'));
  settings.Kestrel = {
    ...settings.Kestrel,
    Endpoints: {
      Https: { Url: 'https://127.0.0.1:0', Protocols: protocols, Certificate: { Path: cert, KeyPath: key } },
    },
  };
  fs.writeFileSync(path.join(dir, 'appsettings.json'), JSON.stringify(settings, null, 2));
  return dir;
}
