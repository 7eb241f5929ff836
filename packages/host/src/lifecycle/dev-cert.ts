import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** `<home>/.ack/dev-cert/`: beside the signing key, outside every served folder, ignored by git. */
export function devCertificateFiles(serviceHome: string): { dir: string; cert: string; key: string } {
  const dir = path.join(serviceHome, '.ack', 'dev-cert');
  return { dir, cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
}

export function hasDevCertificate(serviceHome: string): boolean {
  const files = devCertificateFiles(serviceHome);
  return fs.existsSync(files.cert) && fs.existsSync(files.key);
}

/**
 * Makes a self-signed development certificate for localhost, 127.0.0.1 and ::1 (EC P-256, valid
 * 365 days) with the `openssl` command, files readable by the owner only (0600). Written into a
 * fresh folder and renamed into place, so a half-made pair is never used. Browsers will warn until
 * the certificate is trusted (docs/protocols.md).
 */
export function createDevCertificate(serviceHome: string, now = new Date()): { cert: string; key: string } {
  const files = devCertificateFiles(serviceHome);
  const parent = path.dirname(files.dir);
  fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
  const staging = fs.mkdtempSync(path.join(parent, 'dev-cert-new-'));
  try {
    const cert = path.join(staging, 'cert.pem');
    const key = path.join(staging, 'key.pem');
    makeSelfSignedCertificate({
      cert,
      key,
      subject: `/CN=localhost/O=ack development certificate ${now.toISOString().slice(0, 10)}`,
      names: ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1'],
      days: 365,
      serverAuth: true,
    });
    fs.chmodSync(cert, 0o600);
    fs.chmodSync(key, 0o600);
    fs.chmodSync(staging, 0o700);
    fs.rmSync(files.dir, { recursive: true, force: true });
    fs.renameSync(staging, files.dir);
    return { cert: files.cert, key: files.key };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

export interface SelfSignedCertificateOptions {
  /** Where the certificate (PEM) is written. */
  cert: string;
  /** Where the private key (PEM, not encrypted) is written. */
  key: string;
  /** openssl's `-subj`, e.g. `/CN=localhost`. */
  subject: string;
  /** The subjectAltName entries, e.g. `DNS:localhost`, `IP:127.0.0.1`. */
  names: readonly string[];
  days: number;
  /** Adds `extendedKeyUsage=serverAuth`. */
  serverAuth?: boolean;
}

/**
 * The one maker of self-signed certificates (EC P-256) with the `openssl` command: `ack dev-cert`
 * and the tests' certificates (docs/protocols.md). Writes `cert` and `key` as openssl leaves them;
 * an error says what openssl said, or that the command is missing.
 */
export function makeSelfSignedCertificate(options: SelfSignedCertificateOptions): void {
  const args = [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    String(options.days),
    '-subj',
    options.subject,
    '-addext',
    `subjectAltName=${options.names.join(',')}`,
  ];
  if (options.serverAuth) args.push('-addext', 'extendedKeyUsage=serverAuth');
  args.push('-keyout', options.key, '-out', options.cert);
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT')
      throw new Error(
        'the openssl command is needed to make a development certificate; install it, or configure a certificate (docs/protocols.md)',
        { cause: err },
      );
    throw new Error(`openssl could not make a development certificate: ${e.stderr?.toString().trim() || e.message}`, {
      cause: err,
    });
  }
}
