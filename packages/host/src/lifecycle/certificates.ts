import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { SettingsError } from '../settings/load.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from '../logging/logger.js';
import type { CertificateSource } from './endpoints.js';
import { devCertificateFiles } from './dev-cert.js';

export interface LoadedCertificate {
  /** Key material for `tls.createSecureContext` / `server.setSecureContext`. */
  options: tls.SecureContextOptions;
  /** Absolute paths of the files read, watched for renewal. */
  files: string[];
}

/**
 * Reads a certificate and proves it usable (parsed, key matches, password right) by building a
 * secure context, so that a bad setting stops start-up with a message naming that setting (exit 2).
 * Passwords never appear in messages.
 */
export function loadCertificate(source: CertificateSource, paths: HostPaths): LoadedCertificate {
  if (source.kind === 'dev') {
    const dev = devCertificateFiles(paths.serviceHome);
    const pem: CertificateSource = {
      kind: 'pem',
      certFile: dev.cert,
      certSetting: source.setting,
      keyFile: dev.key,
      keySetting: source.setting,
    };
    return loadCertificate(pem, paths);
  }
  if (source.kind === 'pem') {
    const certFile = paths.resolve(source.certFile);
    const keyFile = paths.resolve(source.keyFile);
    const options = { cert: readFile(certFile, source.certSetting), key: readFile(keyFile, source.keySetting) };
    try {
      tls.createSecureContext(options);
    } catch (err) {
      const { code = '', message } = err as NodeJS.ErrnoException;
      if (code === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH')
        throw new SettingsError(
          `${source.keySetting}: the key in ${keyFile} does not match the certificate in ${certFile}`,
        );
      if (/PEM|DECODER|no start line|unsupported/i.test(code + message) && !looksLikePem(options.cert)) {
        throw new SettingsError(`${source.certSetting}: ${certFile} is not a PEM certificate`);
      }
      throw new SettingsError(`${source.keySetting}: ${keyFile} is not a usable PEM private key (${message})`);
    }
    return { options, files: [certFile, keyFile] };
  }
  const file = paths.resolve(source.file);
  const options = { pfx: readFile(file, source.fileSetting), passphrase: source.password };
  try {
    tls.createSecureContext(options);
  } catch (err) {
    const { message } = err as Error;
    if (/mac verify failure|invalid password/i.test(message))
      throw new SettingsError(`${source.passwordSetting}: wrong password for ${file}`);
    throw new SettingsError(
      `${source.fileSetting}: ${file} is not a PFX (PKCS#12) file (${message}); for a PEM certificate also set its key file`,
    );
  }
  return { options, files: [file] };
}

function readFile(file: string, setting: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SettingsError(`${setting}: file not found: ${file}`);
    throw new SettingsError(`${setting}: cannot read ${file} (${code ?? (err as Error).message})`);
  }
}

function looksLikePem(data: Buffer): boolean {
  return data.subarray(0, 200).toString('latin1').includes('-----BEGIN CERTIFICATE-----');
}

/**
 * Watches the certificate's files and hands a renewed one to `apply` (a server's
 * `setSecureContext`): new connections get it, open ones keep theirs. A renewal written in steps
 * (certificate first, key second) is only applied once the pair loads; until then the running
 * certificate stays and a warning names the problem. Returns a function that stops watching.
 */
export function watchCertificate(
  source: CertificateSource,
  current: LoadedCertificate,
  paths: HostPaths,
  logger: Logger,
  apply: (options: tls.SecureContextOptions) => void,
): () => void {
  const dirs = [...new Set(current.files.map((f) => path.dirname(f)))];
  const names = new Set(current.files.map((f) => path.basename(f)));
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    timer = undefined;
    try {
      const next = loadCertificate(source, paths);
      apply(next.options);
      logger.info(`certificate reloaded from ${next.files.join(', ')}`);
    } catch (err) {
      logger.warn(`certificate change not applied, the running certificate stays: ${(err as Error).message}`);
    }
  };
  // Directories, not files: a renewal usually replaces the file (a new inode), which a file watch misses.
  const watchers = dirs.map((dir) =>
    fs.watch(dir, { persistent: false }, (_event, name) => {
      if (name !== null && !names.has(name.toString())) return;
      clearTimeout(timer);
      timer = setTimeout(reload, 150);
    }),
  );
  for (const w of watchers) w.on('error', (err) => logger.warn(`certificate watch stopped: ${err.message}`));
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
