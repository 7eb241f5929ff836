import { describe, expect, it } from 'vitest';
import { isSecretKey, redactSecretsInText, redactSettings, redactText, redactValue } from './redact.js';
import { HostSettingsSchema } from './schema.js';

const withSecrets = (exposed: boolean) =>
  HostSettingsSchema.parse({
    AppSettings: {
      HostAccessID: 'host-access-id',
      BusinessServerUrl: 'https://svc:url-pass@api.example/transact',
      Security: { SigningKey: 'signing-key', ExposeSecretValues: exposed },
      SessionState: {
        MySqlConnectionString: 'Server=127.0.0.1;Uid=ack;Pwd=mysql-pass;',
        SqlServerConnectionString: 'Data Source=x;User ID=ack;Password=sql-pass;',
      },
      FileSyncTokens: ['token-a', 'token-b'],
      ApiCredentials: { ClientSecret: 'client-secret', ClientId: 'visible-id' },
      Notes: 'see Server=x;Password=in-a-note;Timeout=3',
    },
  });

describe('redactSettings', () => {
  it('replaces connection strings, HostAccessID, keys, tokens and secrets by ***, in a copy', () => {
    const settings = withSecrets(false);
    const shown = redactSettings(settings);
    const app = shown.AppSettings as Record<string, any>;
    expect(app.HostAccessID).toBe('***');
    expect(app.Security.SigningKey).toBe('***');
    expect(app.SessionState.MySqlConnectionString).toBe('***');
    expect(app.SessionState.SqlServerConnectionString).toBe('***');
    expect(app.FileSyncTokens).toEqual(['***', '***']);
    expect(app.ApiCredentials).toEqual({ ClientSecret: '***', ClientId: 'visible-id' });
    // Passwords inside other strings.
    expect(app.BusinessServerUrl).toBe('https://svc:***@api.example/transact');
    expect(app.Notes).toBe('see Server=x;Password=***;Timeout=3');
    // Harmless keys stay: the switch itself, time spans, names.
    expect(app.Security.ExposeSecretValues).toBe(false);
    expect(shown.Kestrel.Limits.KeepAliveTimeout).toBe('00:02:00');
    expect(app.SessionState.MySqlTableName).toBe('SessionData');
    expect(JSON.stringify(shown)).not.toMatch(
      /host-access-id|signing-key|mysql-pass|sql-pass|token-a|client-secret|url-pass|in-a-note/,
    );
    // The original is untouched.
    expect(settings.AppSettings.HostAccessID).toBe('host-access-id');
  });

  it('shows everything when Security:ExposeSecretValues is true', () => {
    const shown = redactSettings(withSecrets(true));
    expect(shown.AppSettings.HostAccessID).toBe('host-access-id');
    expect(shown.AppSettings.SessionState.MySqlConnectionString).toContain('Pwd=mysql-pass;');
  });

  it('keeps an empty secret empty, so that "not set" still shows', () => {
    expect(redactSettings(HostSettingsSchema.parse({})).AppSettings.Security.SigningKey).toBe('');
  });
});

describe('secret keys and texts', () => {
  it('recognise secret key names', () => {
    for (const k of [
      'HostAccessID',
      'SigningKey',
      'MySqlConnectionString',
      'FileSyncTokens',
      'AuthorizationKey',
      'ClientSecret',
      'DbPassword',
      'apiKey',
    ])
      expect(isSecretKey(k), k).toBe(true);
    for (const k of [
      'KeepAliveTimeout',
      'ExposeSecretValues',
      'MaxContractSyncFileBytes',
      'SessionCookieName',
      'CookiePrefixName',
      'MySqlSchemaName',
    ])
      expect(isSecretKey(k), k).toBe(false);
  });

  it('hide passwords in connection strings (quoted or last) and URLs', () => {
    expect(redactSecretsInText('Uid=a;Pwd=p1')).toBe('Uid=a;Pwd=***');
    expect(redactSecretsInText('User ID=a; Password = "p;2"; Pooling=true')).toBe(
      'User ID=a; Password = ***; Pooling=true',
    );
    expect(redactSecretsInText('mysql://ack:p3@db:3306/x')).toBe('mysql://ack:***@db:3306/x');
    expect(redactSecretsInText('nothing to hide; user@example.com')).toBe('nothing to hide; user@example.com');
  });

  it('redactValue works on any configuration object (e.g. a module.json)', () => {
    expect(redactValue({ ModuleConfig: { FileSyncTokens: ['t'], AuthorizationKey: 'k', Name: 'n' } })).toEqual({
      ModuleConfig: { FileSyncTokens: ['***'], AuthorizationKey: '***', Name: 'n' },
    });
  });

  it('redactText hides configured values by name (a URL whole, its host, its password) and passwords in content', () => {
    const url = 'http://svc:pa%24s@api.example:8421/transact/execute';
    const text = `POST http://svc:pa%24s@api.example:8421/transact/execute failed: connect ECONNREFUSED api.example:8421; pa$s; Server=x;Password=db-pw;`;
    const out = redactText(text, { BusinessServerUrl: url });
    expect(out).toBe(
      'POST [BusinessServerUrl] failed: connect ECONNREFUSED [BusinessServerUrl]; ***; Server=x;Password=***;',
    );
    expect(redactText('nothing here', { BusinessServerUrl: '' })).toBe('nothing here');
  });
});
