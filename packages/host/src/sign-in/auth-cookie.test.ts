import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAuthTicketReader, signAuthTicket, type AuthTicket } from './auth-cookie.js';

const current = crypto.randomBytes(32);
const previous = crypto.randomBytes(32);
const now = Date.parse('2026-11-26T12:00:00Z');
const ticket = (exp: number): AuthTicket => ({
  tid: 't1',
  exp,
  user: {
    ApplicationID: 'HDS',
    UserID: 'alice',
    SessionKey: '',
    ApplicationRoleID: '',
    Roles: ['User'],
    Claims: {},
    LoginedAt: '2026-11-26T11:00:00.000Z',
  },
});

/** A reader over a key list the test changes, counting how often it asked for the keys (verified). */
function reader(keys: Buffer[]) {
  let verified = 0;
  const read = createAuthTicketReader(() => {
    verified++;
    return keys;
  }, 2);
  return { read, verified: () => verified };
}

describe('the sign-in phase’s authentication cookie reader', () => {
  it('verifies a cookie once, then only parses it and checks its expiry', () => {
    const r = reader([current]);
    const cookie = signAuthTicket(ticket(now + 60_000), current);
    expect(r.read(cookie, now)?.user.UserID).toBe('alice');
    expect(r.read(cookie, now + 1)?.user.UserID).toBe('alice');
    expect(r.verified()).toBe(1);
    // Remembered, and still refused once it has expired.
    expect(r.read(cookie, now + 60_000)).toBeUndefined();
  });

  it('gives every request its own ticket: a change to one is not seen by the next', () => {
    const r = reader([current]);
    const cookie = signAuthTicket(ticket(now + 60_000), current);
    r.read(cookie, now)!.user.UserID = 'mallory';
    expect(r.read(cookie, now)?.user.UserID).toBe('alice');
  });

  it('does not remember a cookie only a previous key verifies: it stops when that key goes', () => {
    const keys = [current, previous];
    const r = reader(keys);
    const old = signAuthTicket(ticket(now + 60_000), previous);
    expect(r.read(old, now)?.user.UserID).toBe('alice');
    expect(r.read(old, now)?.user.UserID).toBe('alice');
    expect(r.verified()).toBe(2);
    keys.pop();
    expect(r.read(old, now)).toBeUndefined();
  });

  it('refuses what it refused before, and forgets the oldest cookie beyond its bound', () => {
    const r = reader([current]);
    const forged = signAuthTicket(ticket(now + 60_000), previous);
    expect(r.read(forged, now)).toBeUndefined();
    expect(r.read(forged, now)).toBeUndefined();
    expect(r.verified()).toBe(2);
    const cookies = [1, 2, 3].map((i) => signAuthTicket(ticket(now + 60_000 + i), current));
    for (const c of cookies) r.read(c, now);
    expect(r.verified()).toBe(5);
    r.read(cookies[0]!, now);
    expect(r.verified()).toBe(6);
    r.read(cookies[2]!, now);
    expect(r.verified()).toBe(6);
  });
});
