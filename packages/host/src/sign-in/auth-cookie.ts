import crypto from 'node:crypto';
import type { UserAccount } from './user-account.js';
import { safeEqual } from '../keys/safe-equal.js';

/**
 * The authentication cookie's value: `v1.<base64url JSON>.<base64url HMAC-SHA256>`. The payload
 * carries the account the server believes, the token id and the expiry; the MAC (key
 * `auth-cookie` of the host's keyring) makes it unforgeable. Verification is constant time and
 * rejects any other version, a bad MAC, a payload that is not the expected shape, or an expired one.
 */
export interface AuthTicket {
  /** Token id, the GUID part of `{P}.TokenID`. */
  tid: string;
  /** Expiry, ms since 1970 (UTC). */
  exp: number;
  user: UserAccount;
  /**
   * The session the sign-in started (sessions on): sign-out destroys it wherever the store is
   * shared, which lets a request that still finds it skip the sign-out read (docs/dev-sign-in.md
   * "Sign-out holds"). Absent when sessions are off.
   */
  sid?: string;
}

const VERSION = 'v1';

export function signAuthTicket(ticket: AuthTicket, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify(ticket), 'utf8').toString('base64url');
  const mac = crypto.createHmac('sha256', key).update(`${VERSION}.${payload}`).digest('base64url');
  return `${VERSION}.${payload}.${mac}`;
}

/**
 * The ticket, its payload's JSON and which of `keys` (the current key, then any previous ones still
 * valid: rotation, docs/sessions.md) signed it; undefined when it is not valid.
 */
function verify(
  value: string | undefined,
  keys: readonly Buffer[],
  nowMs: number,
): { ticket: AuthTicket; json: string; keyIndex: number } | undefined {
  if (typeof value !== 'string' || value.length > 8192) return undefined;
  const parts = value.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  const given = Buffer.from(parts[2]!, 'base64url');
  const keyIndex = keys.findIndex((key) =>
    safeEqual(given, crypto.createHmac('sha256', key).update(`${VERSION}.${parts[1]}`).digest()),
  );
  if (keyIndex === -1) return undefined;
  const json = Buffer.from(parts[1]!, 'base64url').toString('utf8');
  const ticket = parseTicket(json, nowMs);
  return ticket && { ticket, json, keyIndex };
}

function parseTicket(json: string, nowMs: number): AuthTicket | undefined {
  let ticket: unknown;
  try {
    ticket = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!isTicket(ticket) || ticket.exp <= nowMs) return undefined;
  return ticket;
}

/**
 * `verifyAuthTicket` for the sign-in phase, which meets the same cookie on every request of a
 * browser: a cookie the current key verified is remembered by its exact text (its payload's JSON),
 * and met again it is only parsed and checked for expiry, not verified again (docs/benchmarks.md
 * "Where a signed-in request's time goes"). Each request gets its own parsed ticket, so nothing a
 * module changes in `req.ackUser` reaches another request. A cookie only a previous key verifies is
 * not remembered, so it stops working when that key's validity ends. At most `max` cookies are
 * remembered, the oldest forgotten first.
 */
export function createAuthTicketReader(
  keys: () => readonly Buffer[],
  max = 1024,
): (value: string | undefined, nowMs: number) => AuthTicket | undefined {
  const verified = new Map<string, string>();
  return (value, nowMs) => {
    if (typeof value !== 'string') return undefined;
    const json = verified.get(value);
    if (json !== undefined) return parseTicket(json, nowMs);
    const result = verify(value, keys(), nowMs);
    if (result?.keyIndex === 0) {
      verified.set(value, result.json);
      if (verified.size > max) verified.delete(verified.keys().next().value!);
    }
    return result?.ticket;
  };
}

function isTicket(t: unknown): t is AuthTicket {
  if (typeof t !== 'object' || t === null) return false;
  const o = t as Record<string, unknown>;
  const user = o.user as Record<string, unknown> | null;
  return (
    typeof o.tid === 'string' &&
    typeof o.exp === 'number' &&
    (o.sid === undefined || typeof o.sid === 'string') &&
    typeof user === 'object' &&
    user !== null &&
    typeof user.UserID === 'string' &&
    user.UserID !== '' &&
    Array.isArray(user.Roles)
  );
}
