import { SettingsError } from '../settings/load.js';
import type { HostSettings } from '../settings/schema.js';

export type Protocols = 'Http1' | 'Http2' | 'Http1AndHttp2';

/** Where a listener's certificate comes from; each file names the setting it came from, for messages. */
export type CertificateSource =
  | { kind: 'pem'; certFile: string; certSetting: string; keyFile: string; keySetting: string }
  | { kind: 'pfx'; file: string; fileSetting: string; password: string; passwordSetting: string }
  /** The development certificate under `<home>/.ack/dev-cert/`. */
  | { kind: 'dev'; setting: string };

/** One listener the host opens, planned from settings before any socket exists. */
export interface EndpointPlan {
  /** `Default` (ServerPort), `Https` (ServerDevCertSslPort) or the `Kestrel:Endpoints` name. */
  name: string;
  scheme: 'http' | 'https';
  /** Undefined: all interfaces. */
  host: string | undefined;
  port: number;
  protocols: Protocols;
  certificate?: CertificateSource;
}

const WILDCARD_HOSTS = new Set(['*', '+', '0.0.0.0', '[::]']);
const URL_SHAPE = /^(https?):\/\/(\[[0-9a-f:.]+\]|[^:/[\]]+)(?::(\d{1,5}))?\/?$/i;

/**
 * `Kestrel:Endpoints:<Name>` as Kestrel reads them (docs/protocols.md). Paths stay as written
 * here; they are resolved from the entry base path when the certificate is loaded.
 */
export function planKestrelEndpoints(settings: HostSettings): EndpointPlan[] {
  return Object.entries(settings.Kestrel.Endpoints).map(([name, endpoint]) => {
    const at = `Kestrel:Endpoints:${name}`;
    const m = URL_SHAPE.exec(endpoint.Url.trim());
    const port = m ? Number(m[3] ?? (m[1]!.toLowerCase() === 'https' ? 443 : 80)) : NaN;
    if (!m || port > 65535) {
      throw new SettingsError(`${at}:Url: expected http://host:port or https://host:port, got "${endpoint.Url}"`);
    }
    const scheme = m[1]!.toLowerCase() === 'https' ? 'https' : 'http';
    const rawHost = m[2]!;
    const host = WILDCARD_HOSTS.has(rawHost) ? undefined : rawHost.replace(/^\[|\]$/g, '');
    // Kestrel's defaults: HTTP/1.1 and HTTP/2 on TLS; cleartext HTTP/2 (h2c) only when asked for alone.
    const asked = endpoint.Protocols ?? (scheme === 'https' ? 'Http1AndHttp2' : 'Http1');
    const protocols: Protocols = scheme === 'http' && asked === 'Http1AndHttp2' ? 'Http1' : asked;
    const plan: EndpointPlan = { name, scheme, host, port, protocols };
    if (scheme === 'https') plan.certificate = certificateSource(endpoint.Certificate, `${at}:Certificate`);
    else if (endpoint.Certificate?.Path)
      throw new SettingsError(`${at}:Certificate: a certificate needs an https:// Url`);
    return plan;
  });
}

/** The `ServerDevCert*` listener of the original host: a PFX with a password or a PEM pair; else the development certificate. */
export function planDevCertEndpoint(settings: HostSettings, port: number, host: string | undefined): EndpointPlan {
  const app = settings.AppSettings;
  let certificate: CertificateSource;
  if (app.ServerDevCertFilePath.trim() === '')
    certificate = { kind: 'dev', setting: 'AppSettings:ServerDevCertFilePath' };
  else if (app.ServerDevCertKeyFilePath.trim() !== '') {
    certificate = {
      kind: 'pem',
      certFile: app.ServerDevCertFilePath,
      certSetting: 'AppSettings:ServerDevCertFilePath',
      keyFile: app.ServerDevCertKeyFilePath,
      keySetting: 'AppSettings:ServerDevCertKeyFilePath',
    };
  } else {
    certificate = {
      kind: 'pfx',
      file: app.ServerDevCertFilePath,
      fileSetting: 'AppSettings:ServerDevCertFilePath',
      password: app.ServerDevCertPassword,
      passwordSetting: 'AppSettings:ServerDevCertPassword',
    };
  }
  return { name: 'Https', scheme: 'https', host, port, protocols: 'Http1AndHttp2', certificate };
}

function certificateSource(
  cert: { Path: string; KeyPath: string; Password: string } | undefined,
  at: string,
): CertificateSource {
  // No certificate: Kestrel takes its development certificate; so does this host (docs/protocols.md).
  if (!cert || cert.Path.trim() === '') {
    if (cert && cert.KeyPath.trim() !== '')
      throw new SettingsError(`${at}:Path: KeyPath is set but Path (the certificate) is empty`);
    return { kind: 'dev', setting: `${at}:Path` };
  }
  if (cert.KeyPath.trim() !== '')
    return {
      kind: 'pem',
      certFile: cert.Path,
      certSetting: `${at}:Path`,
      keyFile: cert.KeyPath,
      keySetting: `${at}:KeyPath`,
    };
  return {
    kind: 'pfx',
    file: cert.Path,
    fileSetting: `${at}:Path`,
    password: cert.Password,
    passwordSetting: `${at}:Password`,
  };
}
