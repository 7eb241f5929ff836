import { describe, expect, it } from 'vitest';
import { exposesSecrets, redactText, redactValue } from './redact.js';

// Redaction at its edges (docs/logging.md, docs/configuration.md "ExposeSecretValues"): what must
// be hidden is hidden whole, and what is too short or empty to be a secret does not blank out
// ordinary words of a log line.
describe('redactText with configured values', () => {
  it('hides a configured value that is not a URL, even a three-character one', () => {
    expect(redactText('called with key abcdef here', { ApiKey: 'abcdef' })).toBe('called with key [ApiKey] here');
    expect(redactText('pin xyz used', { Pin: 'xyz' })).toBe('pin [Pin] used');
  });

  it('leaves texts alone for a blank setting, and never replaces forms shorter than three characters', () => {
    expect(redactText('a   b', { Blank: '   ' })).toBe('a   b');
    // The host "db" of the URL is too short to hide on its own: every "db" in the line would go.
    expect(redactText('the db is down at http://db/x', { Url: 'http://db' })).toBe('the db is down at [Url]x');
    // A two-character password is not hunted for alone either (it is hidden inside the URL).
    expect(redactText('pw http://u:pw@api.test/x', { Url: 'http://u:pw@api.test/x' })).toBe('pw [Url]');
  });

  it('hides a three-character URL password wherever it appears alone', () => {
    expect(redactText('password abc was refused', { Url: 'http://u:abc@api.test/x' })).toBe('password *** was refused');
  });

  it('hides the URL without its credentials and its origin', () => {
    const configured = { Url: 'https://svc:s3cret@api.test:8443/transact/' };
    expect(redactText('GET https://api.test:8443/transact/ failed', configured)).toBe('GET [Url] failed');
    expect(redactText('GET https://api.test:8443/transact failed', configured)).toBe('GET [Url] failed');
    expect(redactText('connect to https://api.test:8443 refused', configured)).toBe('connect to [Url] refused');
    expect(redactText('ECONNREFUSED api.test:8443', configured)).toBe('ECONNREFUSED [Url]');
  });
});

describe('redactValue on any shape', () => {
  it('keeps arrays arrays, redacting passwords inside their strings', () => {
    expect(redactValue(['Server=x;Password=p1', 'plain'])).toEqual(['Server=x;Password=***', 'plain']);
  });

  it('under a secret key, redacts every string however deep, and keeps numbers, booleans and null', () => {
    expect(redactValue({ Secrets: { a: 'x', list: ['y', ''], n: 3, on: true, none: null }, ApiToken: 42 })).toEqual({
      Secrets: { a: '***', list: ['***', ''], n: 3, on: true, none: null },
      ApiToken: 42,
    });
  });
});

describe('ExposeSecretValues', () => {
  it('is off unless set to true, whatever is missing', () => {
    expect(exposesSecrets({})).toBe(false);
    expect(exposesSecrets({ AppSettings: {} })).toBe(false);
    expect(exposesSecrets({ AppSettings: { Security: {} } })).toBe(false);
    expect(exposesSecrets({ AppSettings: { Security: { ExposeSecretValues: 'true' } } })).toBe(false);
    expect(exposesSecrets({ AppSettings: { Security: { ExposeSecretValues: true } } })).toBe(true);
  });
});
