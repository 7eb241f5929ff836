import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { createHostPaths } from '@ack/host/settings';
import { createDevCertificate, devCertificateFiles, hasDevCertificate } from '@ack/host/cluster';

export interface DevCertOptions {
  appDir?: string;
  force?: boolean;
  json?: boolean;
}

/** What `ack dev-cert` made or found; with `--json`, this with `ok: true` is the one document. */
export interface DevCertReport {
  created: boolean;
  cert: string;
  key: string;
  subjectAltName: string;
  validTo: string;
  fingerprint256: string;
}

/** The `--json` document of a run that failed before it had a certificate (docs/protocols.md). */
export const DEV_CERT_JSON_BASE = {
  created: false,
  cert: null,
  key: null,
  subjectAltName: null,
  validTo: null,
  fingerprint256: null,
};

/**
 * `ack dev-cert`: makes the development certificate `ack serve --https-port` uses when no
 * certificate is configured: `<home>/.ack/dev-cert/cert.pem` and `key.pem`, mode 0600, self-signed
 * for localhost, 127.0.0.1 and ::1. An existing one is kept unless `--force`. docs/protocols.md.
 */
export function devCert(options: DevCertOptions): DevCertReport {
  const appDir = path.resolve(options.appDir ?? process.cwd());
  const home = createHostPaths(appDir).serviceHome;
  const files = devCertificateFiles(home);
  const existed = hasDevCertificate(home);
  if (!existed || options.force) createDevCertificate(home);
  const cert = new X509Certificate(fs.readFileSync(files.cert));
  return {
    created: !existed || options.force === true,
    cert: files.cert,
    key: files.key,
    subjectAltName: cert.subjectAltName ?? '',
    validTo: new Date(cert.validTo).toISOString(),
    fingerprint256: cert.fingerprint256,
  };
}

export function registerDevCert(program: Command): void {
  program
    .command('dev-cert')
    .description(
      'make the development HTTPS certificate (under <home>/.ack/dev-cert/) that ack serve --https-port uses',
    )
    .option(
      '--app-dir <dir>',
      'folder holding appsettings.json (its parent is the home, unless ACK_HOME is set); default: the current folder',
    )
    .option('--force', 'replace an existing development certificate')
    .option('--json', 'print one JSON document: { ok, created, cert, key, subjectAltName, validTo, fingerprint256 }')
    .action((opts: DevCertOptions) => {
      const report = devCert(opts);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ ok: true, ...report }, null, 2)}\n`);
        return;
      }
      process.stdout.write(
        `${report.created ? 'development certificate created' : 'development certificate already there'}: ${report.cert}\n` +
          `key: ${report.key} (readable by its owner only)\n` +
          `for: ${report.subjectAltName}; valid until ${report.validTo.slice(0, 10)}\n` +
          `SHA-256 fingerprint: ${report.fingerprint256}\n` +
          'browsers warn until it is trusted; see docs/protocols.md\n',
      );
    });
}
