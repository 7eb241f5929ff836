import session, { type Store } from 'express-session';
import createMemoryStore from 'memorystore';
import type { RequestHandler } from 'express';
import type { SessionStateSettings } from '../settings/schema.js';
import { SettingsError } from '../settings/load.js';

/**
 * Phase 3: `SessionState`. The Memory store expires idle sessions and bounds its entries (least
 * recently used first); express-session's own MemoryStore does neither and must not be used.
 * Returns undefined when `IsSession` is false or the cookie name is empty (as the original).
 */
export type SessionMiddleware = RequestHandler & {
  close?: () => void;
  /** The store when other processes share it (database stores): sign-outs are recorded there too. */
  sharedStore?: Store;
};

export function createSessionMiddleware(state: SessionStateSettings, secret: Buffer, settingsFile: string): SessionMiddleware | undefined {
  if (!state.IsSession || state.SessionCookieName.trim() === '') return undefined;
  if (state.CacheType !== 'Memory') {
    throw new SettingsError(
      `${settingsFile}: AppSettings:SessionState:CacheType: "${state.CacheType}" is not available yet in ack for Node; use "Memory"`,
    );
  }
  const idleMs = state.IdleTimeoutMinutes * 60_000;
  const MemoryStore = createMemoryStore(session);
  const store = new MemoryStore({ checkPeriod: Math.min(idleMs, 60_000), max: state.MemoryMaxEntries, ttl: idleMs });
  const middleware = session({
    name: state.SessionCookieName,
    secret: secret.toString('hex'),
    store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: '/' },
  });
  const handler: SessionMiddleware = middleware;
  // memorystore's timer is not in its published types: stop it when the store has one.
  handler.close = () => {
    if ('stopInterval' in store && typeof store.stopInterval === 'function') store.stopInterval();
  };
  // The in-process store is not shared, and it expires entries on idle time: sign-outs are kept
  // beside it instead (sign-in/revocations.ts). A store shared by processes sets `sharedStore`.
  handler.sharedStore = undefined;
  return handler;
}
