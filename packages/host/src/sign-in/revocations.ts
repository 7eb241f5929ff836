import type { Logger } from '../logging/logger.js';
import type { SharedSessionStore } from '../session/store-base.js';
import { openRevocationFile } from './revocation-file.js';

/**
 * Signed-out authentication cookies (docs/dev-sign-in.md "Sign-out holds"): a cookie is valid until
 * its expiry by its signature alone, so sign-out records its token id until that expiry and the
 * sign-in phase refuses it. Kept in this process (bounded: expired ids go first, then the oldest);
 * written to a file under the home, so that a restart or another process on the same home knows it
 * (read back when an id is not known here and the file has grown); announced to the other workers
 * of `ack serve --workers` (the bus between workers), which keep it too; and, when the session store
 * is shared by processes and hosts, written there under the
 * reserved id prefix `ack-revoked:` (never a session id: those are random base64url) until the
 * cookie's expiry, so that a cookie signed out on one host is refused by all.
 */
export interface RevocationList {
  /**
   * Records the sign-out of `tokenId`, then destroys `sessionId` (the session that sign-in
   * started) in the shared store: recorded first, so that no host finds the session gone and the
   * sign-out not yet recorded.
   */
  revoke(tokenId: string, expiresAtMs: number, sessionId?: string): Promise<void>;
  /** A sign-out another worker recorded and announced: kept in this process. */
  heard(tokenId: string, expiresAtMs: number): void;
  /**
   * True when the token id was signed out and has not expired yet. `sessionHoldsIt`: the request's
   * session, read from the shared store, is the one this sign-in started, so the store holds no
   * completed sign-out of it (sign-out destroys that session): only this process's list is asked,
   * not the file or the store (docs/dev-sign-in.md "Sign-out holds").
   */
  isRevoked(tokenId: string, sessionHoldsIt?: boolean): Promise<boolean>;
}

export interface RevocationOptions {
  /** The session store, when every process shares it. */
  sharedStore?: SharedSessionStore;
  /** Tells the other workers of this machine (the host publishes on its bus between workers). */
  announce?: (tokenId: string, expiresAtMs: number) => void;
  /** Most token ids kept in this process. */
  maxEntries?: number;
  /** The file every process on this home shares (`<home>/.ack/sign-outs`); none: this process only. */
  file?: string;
  /** Where a file that cannot be read or written is reported. */
  logger?: Logger;
}

export const REVOKED_KEY_PREFIX = 'ack-revoked:';

interface RevokedRecord {
  revoked: true;
  until: number;
}

export function createRevocationList(options: RevocationOptions = {}): RevocationList {
  const { sharedStore, announce, maxEntries = 100_000, logger } = options;
  const file = options.file === undefined ? undefined : openRevocationFile(options.file);
  // One line per kind of file failure until the file works again, not one per request.
  const fileFailures = new Set<string>();
  const fileFailed = (what: string, err: unknown) => {
    if (fileFailures.has(what)) return;
    fileFailures.add(what);
    const reason = (err as NodeJS.ErrnoException | undefined)?.code ?? String(err);
    logger?.error(`sign-out file ${options.file}: ${what} failed (${reason}); sign-outs are kept in this process only`);
  };
  const local = new Map<string, number>();
  const remember = (tokenId: string, expiresAtMs: number) => {
    if (expiresAtMs <= Date.now()) return;
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
    async revoke(tokenId, expiresAtMs, sessionId) {
      if (expiresAtMs <= Date.now()) return;
      remember(tokenId, expiresAtMs);
      announce?.(tokenId, expiresAtMs);
      if (file) {
        await file.append(tokenId, expiresAtMs).then(
          () => fileFailures.delete('writing'),
          (err: unknown) => fileFailed('writing', err),
        );
      }
      const record: RevokedRecord = { revoked: true, until: expiresAtMs };
      if (!sharedStore) return;
      await sharedStore.setUntil(REVOKED_KEY_PREFIX + tokenId, record, expiresAtMs);
      if (sessionId === undefined) return;
      await new Promise<void>((resolve, reject) =>
        sharedStore.destroy(sessionId, (err) => (err ? reject(err as Error) : resolve())),
      );
    },
    heard: remember,
    async isRevoked(tokenId, sessionHoldsIt = false) {
      const exp = local.get(tokenId);
      if (exp !== undefined) {
        if (exp > Date.now()) return true;
        local.delete(tokenId);
      }
      if (sessionHoldsIt && sharedStore) return false;
      if (file) {
        // Signed out by an earlier run of this host or by another process on this home.
        const added = await file.refresh().then(
          (records) => {
            fileFailures.delete('reading');
            return records;
          },
          (err: unknown) => {
            fileFailed('reading', err);
            return [];
          },
        );
        for (const [id, exp] of added) remember(id, exp);
        if ((local.get(tokenId) ?? 0) > Date.now()) return true;
      }
      if (!sharedStore) return false;
      const found = await new Promise<unknown>((resolve, reject) =>
        sharedStore.get(REVOKED_KEY_PREFIX + tokenId, (err, data) => (err ? reject(err as Error) : resolve(data))),
      );
      const record = found as Partial<RevokedRecord> | null | undefined;
      if (record?.revoked !== true || typeof record.until !== 'number' || record.until <= Date.now()) return false;
      remember(tokenId, record.until);
      return true;
    },
  };
}
