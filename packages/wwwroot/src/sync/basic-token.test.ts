import { describe, expect, it } from 'vitest';
import { tokenFromAuthorization, verifySyncToken } from './basic-token.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('Basic sync token', () => {
  it('takes the decoded payload up to the first ":" (trimmed), or a payload that is not base64 as it is', () => {
    expect(tokenFromAuthorization(`Basic ${b64('tok:')}`)).toBe('tok');
    expect(tokenFromAuthorization(`basic ${b64(' tok :pw:more')}`)).toBe('tok');
    expect(tokenFromAuthorization(`Basic ${b64('no-colon')}`)).toBe('no-colon');
    expect(tokenFromAuthorization('Basic my_token-1')).toBe('my_token-1');
    expect(tokenFromAuthorization('Basic /w==')).toBe('/w=='); // decodes to a byte that is not UTF-8 text
    expect(tokenFromAuthorization('Bearer tok')).toBeUndefined();
    expect(tokenFromAuthorization(`Basic ${b64(':pw')}`)).toBeUndefined();
  });

  it('says why a request is refused', () => {
    expect(verifySyncToken(`Basic ${b64('a:')}`, [])).toBe('no_tokens_configured');
    expect(verifySyncToken(undefined, ['a'])).toBe('missing_token');
    expect(verifySyncToken('Digest x', ['a'])).toBe('malformed_token');
    expect(verifySyncToken(`Basic ${b64('b:')}`, ['a'])).toBe('invalid_token');
    expect(verifySyncToken(`Basic ${b64('b:')}`, ['a', 'b'])).toBe('ok');
    expect(verifySyncToken(`Basic ${b64('ab:')}`, ['a', 'b'])).toBe('invalid_token');
  });

  it('accepts the matching token wherever it is listed: first, middle or last', () => {
    const tokens = ['first-token', 'middle-token', 'last-token'];
    for (const token of tokens) expect(verifySyncToken(`Basic ${b64(`${token}:`)}`, tokens), token).toBe('ok');
    expect(verifySyncToken(`Basic ${b64('first-tokenX:')}`, tokens)).toBe('invalid_token');
  });
});
