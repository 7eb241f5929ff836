import type { HostSettings } from './schema.js';

// Secrets never reach a log line, an error message or a printed configuration unless the operator
// asks for them with `AppSettings:Security:ExposeSecretValues`. Two rules:
// - by key: a key that names a secret has every string under it replaced by "***";
// - by content: a password inside any other string (a connection string, credentials in a URL).

export const REDACTED = '***';

/**
 * Keys that name a secret. `*ConnectionString` (holds a database password), `HostAccessID` (the
 * contract-sync key), and any key containing token, secret, password, pwd or key — which covers
 * `SigningKey`, `FileSyncTokens`, `AuthorizationKey`, `ApiKey`, `ClientSecret`.
 */
const SECRET_KEY = /connectionstring$|^hostaccessid$|token|secret|password|passwd|pwd|key/i;

/**
 * Keys that match the pattern above but hold no secret: `ExposeSecretValues` is the switch itself,
 * `KeySize`/`KeyLength` are numbers about a key. (`KeepAliveTimeout` does not match at all. Booleans
 * and numbers under any key, e.g. `IsAntiforgeryToken`, are never redacted: only strings are.)
 */
const HARMLESS_KEYS = new Set(['exposesecretvalues', 'keysize', 'keylength']);

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !HARMLESS_KEYS.has(key.toLowerCase());
}

// `Password=...;`, `Pwd=...;` (also `User Password`, quoted values) in connection strings, and
// `scheme://user:password@host` in URLs.
const CONNECTION_PASSWORD = /\b((?:user\s+)?(?:password|pwd))(\s*=\s*)("[^"]*"|'[^']*'|[^;]*)/gi;
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi;

/** Hides passwords inside a free text (connection strings, URLs with credentials). */
export function redactSecretsInText(text: string): string {
  if (!/pass|pwd|@/i.test(text)) return text;
  return text
    .replace(CONNECTION_PASSWORD, (_m, name: string, eq: string) => `${name}${eq}${REDACTED}`)
    .replace(URL_CREDENTIALS, (_m, head: string, _pw: string, at: string) => `${head}${REDACTED}${at}`);
}

/**
 * The one redaction for a text that reaches a log line or an answer: passwords in content (above),
 * and each configured value named in `configured` (a URL, a key) replaced by its setting's name in
 * brackets, so that neither the value, its host, nor its credentials are echoed. For a URL its
 * credentials become `***` wherever they appear alone.
 */
export function redactText(text: string, configured: Readonly<Record<string, string>> = {}): string {
  let out = text;
  for (const [name, value] of Object.entries(configured)) {
    if (value.trim() === '') continue;
    const forms = new Set([value]);
    let secrets: string[] = [];
    try {
      const url = new URL(value);
      secrets = [url.password, decodeURIComponent(url.password)].filter((s) => s.length >= 3);
      const bare = new URL(value);
      bare.username = '';
      bare.password = '';
      forms
        .add(url.href)
        .add(bare.href)
        .add(bare.href.replace(/\/$/, ''))
        .add(`${bare.protocol}//${bare.host}`)
        .add(bare.host);
    } catch {
      // Not a URL: the value itself is all there is to hide.
    }
    // Longest first, so that a URL is replaced whole before its host alone.
    for (const form of [...forms].filter((f) => f.length >= 3).sort((a, b) => b.length - a.length))
      out = out.split(form).join(`[${name}]`);
    for (const secret of secrets) out = out.split(secret).join(REDACTED);
  }
  return redactSecretsInText(out);
}

function redactAll(value: unknown): unknown {
  if (typeof value === 'string') return value === '' ? '' : REDACTED;
  if (Array.isArray(value)) return value.map(redactAll);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactAll(v)]));
  }
  return value;
}

/**
 * A deep copy of any configuration object with secrets redacted by key and by content. An empty
 * string stays empty, so that the printout still tells "not set" (e.g. `SigningKey` "" means the
 * key file is used) without telling anything about a value that is set.
 */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecretsInText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, isSecretKey(k) ? redactAll(v) : redactValue(v)]),
    );
  }
  return value;
}

/** The settings to print or log: secrets redacted unless `Security:ExposeSecretValues` is true. */
export function redactSettings(settings: HostSettings): HostSettings {
  if (exposesSecrets(settings)) return structuredClone(settings);
  return redactValue(settings) as HostSettings;
}

export function exposesSecrets(settings: { AppSettings?: { Security?: { ExposeSecretValues?: unknown } } }): boolean {
  return settings.AppSettings?.Security?.ExposeSecretValues === true;
}
