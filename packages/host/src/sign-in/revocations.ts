import type { Store, SessionData } from 'express-session';

/**
 * Signed-out authentication cookies (docs/dev-sign-in.md "Sign-out"): a cookie is valid until its
 * expiry by its signature alone, so sign-out records its token id until that expiry and the
 * sign-in phase refuses it. Kept in this process (bounded: expired ids go first, then the oldest)
 * and, when the host shares a session store with other processes, in that store too under the
 * reserved id prefix `ack-revoked:` (never a session id: those are random base64url), so that a
 * cookie signed out on one process is refused by all.
 */
export interface RevocationList {
  revoke(tokenId: string, expiresAtMs: number): Promise<void>;
  /** True when the token id was signed out and has not expired yet. */
  isRevoked(tokenId: string): Promise<boolean>;
}

export const REVOKED_KEY_PREFIX = 'ack-revoked:';

export function createRevocationList(sharedStore?: Store, maxEntries = 100_000): RevocationList {
  const local = new Map<string, number>();
  const remember = (tokenId: string, expiresAtMs: number) => {
    local.delete(tokenId);
    local.set(tokenId, expiresAtMs);
    if (local.size <= maxEntries) return;
    const now = Date.now();
    for (const [id, exp] of local) if (exp <= now) local.delete(id);
    // Still full: the oldest sign-outs go (their cookies are the nearest to expiry anyway).
    for (const id of local.keys()) {
      if (local.size <= maxEntries) break;
      local.delete(id);
    }
  };
  return {
    async revoke(tokenId, expiresAtMs) {
      if (expiresAtMs <= Date.now()) return;
      remember(tokenId, expiresAtMs);
      if (!sharedStore) return;
      // Shaped as a session whose cookie expires with the token, so a store drops it then.
      const ttl = expiresAtMs - Date.now();
      const record: SessionData & { revoked: true } = { cookie: { expires: new Date(expiresAtMs), maxAge: ttl, originalMaxAge: ttl }, revoked: true };
      await new Promise<void>((resolve, reject) => sharedStore.set(REVOKED_KEY_PREFIX + tokenId, record, (err) => (err ? reject(err) : resolve())));
    },
    async isRevoked(tokenId) {
      const exp = local.get(tokenId);
      if (exp !== undefined) {
        if (exp > Date.now()) return true;
        local.delete(tokenId);
      }
      if (!sharedStore) return false;
      const found = await new Promise<SessionData | null | undefined>((resolve, reject) =>
        sharedStore.get(REVOKED_KEY_PREFIX + tokenId, (err, data) => (err ? reject(err) : resolve(data))));
      if (!found || !('revoked' in found) || found.revoked !== true) return false;
      // A store may give the expiry back as text (JSON).
      const until = new Date(String(found.cookie?.expires ?? '')).getTime();
      if (Number.isFinite(until)) remember(tokenId, until);
      return true;
    },
  };
}
