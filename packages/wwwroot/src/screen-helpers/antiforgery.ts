import crypto from 'node:crypto';
import { safeEqual } from '@ack/host';

/**
 * Double-submit anti-forgery token (docs/helper-apis.md): the same token goes to the client as a cookie and
 * in the response body; a later request sends it back in the `X-CSRF-TOKEN` header (or the
 * `__RequestVerificationToken` form field) and it must equal the cookie. The token is also
 * HMAC-signed with the host's `antiforgery` key and bound to the signed-in user (if any), so a
 * cookie planted by a sibling sub-domain or minted for another user does not pass.
 */
export const ANTIFORGERY_HEADER = 'X-CSRF-TOKEN';
export const ANTIFORGERY_FORM_FIELD = '__RequestVerificationToken';
export const ANTIFORGERY_MAX_AGE_MS = 12 * 60 * 60 * 1000;

export type TokenFailure = 'missing_cookie' | 'missing_token' | 'mismatch' | 'bad_signature' | 'expired';

export function issueAntiforgeryToken(key: Buffer, userId: string, nowMs: number): string {
  const body = Buffer.alloc(24);
  crypto.randomBytes(16).copy(body, 0);
  body.writeBigUInt64BE(BigInt(nowMs), 16);
  const payload = body.toString('base64url');
  return `${payload}.${mac(key, payload, userId)}`;
}

export function checkAntiforgeryToken(
  key: Buffer,
  userId: string,
  cookieToken: string | undefined,
  submitted: string | undefined,
  nowMs: number,
): TokenFailure | undefined {
  if (!cookieToken) return 'missing_cookie';
  if (!submitted) return 'missing_token';
  if (!safeEqual(cookieToken, submitted)) return 'mismatch';
  const [payload, signature, extra] = submitted.split('.');
  if (!payload || !signature || extra !== undefined) return 'bad_signature';
  if (!safeEqual(signature, mac(key, payload, userId))) return 'bad_signature';
  const body = Buffer.from(payload, 'base64url');
  if (body.length !== 24) return 'bad_signature';
  const issued = Number(body.readBigUInt64BE(16));
  if (nowMs - issued > ANTIFORGERY_MAX_AGE_MS || issued - nowMs > 60_000) return 'expired';
  return undefined;
}

function mac(key: Buffer, payload: string, userId: string): string {
  return crypto.createHmac('sha256', key).update(`${payload}|${userId}`).digest('base64url');
}
