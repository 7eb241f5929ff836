import { createHash } from 'node:crypto';

/** `Authorization: Basic base64("<token>:")`, the form the original's sync clients send. */
export function basicAuthorization(token: string): string {
  return `Basic ${Buffer.from(`${token}:`, 'utf8').toString('base64')}`;
}

/**
 * The `hostAccessID` header value: the lowercase SHA-256 hex of the key, so the key itself never
 * travels (the original host accepts only this form; ack accepts both). A value that already is
 * a 64-digit hex hash is sent as it is.
 */
export function hostAccessHeader(id: string): string {
  const value = id.trim();
  if (/^[0-9a-f]{64}$/.test(value)) return value;
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
