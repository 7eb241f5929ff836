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

/** `keys`: the current key and any previous ones still valid (rotation, docs/sessions.md). */
export function verifyAuthTicket(
  value: string | undefined,
  keys: Buffer | readonly Buffer[],
  nowMs: number,
): AuthTicket | undefined {
  if (typeof value !== 'string' || value.length > 8192) return undefined;
  const parts = value.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  const given = Buffer.from(parts[2]!, 'base64url');
  const matches = (key: Buffer) =>
    safeEqual(given, crypto.createHmac('sha256', key).update(`${VERSION}.${parts[1]}`).digest());
  if (!(Buffer.isBuffer(keys) ? [keys] : keys).some(matches)) return undefined;
  let ticket: unknown;
  try {
    ticket = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isTicket(ticket) || ticket.exp <= nowMs) return undefined;
  return ticket;
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
