import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { createDevCertificate, createHostPaths, devCertificateFiles, hasDevCertificate } from '@ack/host';

export interface DevCertOptions {
  appDir?: string;
  force?: boolean;
}

/**
 * `ack dev-cert`: makes the development certificate `ack serve --https-port` uses when no
 * certificate is configured: `<home>/.ack/dev-cert/cert.pem` and `key.pem`, mode 0600, self-signed
 * for localhost, 127.0.0.1 and ::1. An existing one is kept unless `--force`. docs/protocols.md.
 */
export function devCert(options: DevCertOptions): void {
  const appDir = path.resolve(options.appDir ?? process.cwd());
  const home = createHostPaths(appDir).serviceHome;
  const files = devCertificateFiles(home);
  const existed = hasDevCertificate(home);
  if (!existed || options.force) createDevCertificate(home);
  const cert = new X509Certificate(fs.readFileSync(files.cert));
  process.stdout.write(
    `${existed && !options.force ? 'development certificate already there' : 'development certificate created'}: ${files.cert}\n` +
      `key: ${files.key} (readable by its owner only)\n` +
      `for: ${cert.subjectAltName ?? ''}; valid until ${new Date(cert.validTo).toISOString().slice(0, 10)}\n` +
      `SHA-256 fingerprint: ${cert.fingerprint256}\n` +
      'browsers warn until it is trusted; see docs/protocols.md\n',
  );
}

export function registerDevCert(program: Command): void {
  program
    .command('dev-cert')
    .description('make the development HTTPS certificate (under <home>/.ack/dev-cert/) that ack serve --https-port uses')
    .option('--app-dir <dir>', 'folder holding appsettings.json (its parent is the home, unless ACK_HOME is set); default: the current folder')
    .option('--force', 'replace an existing development certificate')
    .action((opts: DevCertOptions) => devCert(opts));
}
