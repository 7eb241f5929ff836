import { safeEqual } from '@ack/host';

export type TokenVerdict = 'ok' | 'missing_token' | 'malformed_token' | 'invalid_token' | 'no_tokens_configured';

/**
 * The token a `Basic` Authorization header carries (docs/sync.md "Credentials"): the base64-decoded payload up to
 * its first `:`, trimmed (clients send `base64("<token>:")`); a payload that is not base64 is
 * itself the token. Undefined when the header is not a usable Basic header.
 */
export function tokenFromAuthorization(header: string | undefined): string | undefined {
  const match = /^\s*basic\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const payload = match[1]!;
  let text = payload;
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(payload) && payload.length % 4 === 0) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
    } catch {
      text = payload; // not UTF-8 text once decoded: the raw payload is the token
    }
  }
  const colon = text.indexOf(':');
  const token = (colon === -1 ? text : text.slice(0, colon)).trim();
  return token === '' ? undefined : token;
}

/** Checks the header against the configured tokens, in constant time (every token is compared). */
export function verifySyncToken(header: string | undefined, tokens: readonly string[]): TokenVerdict {
  if (tokens.length === 0) return 'no_tokens_configured';
  if (header === undefined || header.trim() === '') return 'missing_token';
  const token = tokenFromAuthorization(header);
  if (token === undefined) return 'malformed_token';
  let match = false;
  for (const t of tokens) match = safeEqual(token, t) || match;
  return match ? 'ok' : 'invalid_token';
}
