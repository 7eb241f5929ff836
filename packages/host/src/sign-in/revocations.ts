import type { Logger } from '../logging/logger.js';
import type { SharedSessionStore } from '../session/store-base.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { openRevocationFile, type RevocationFileOptions } from './revocation-file.js';
import { TokenIdTable } from './token-id-table.js';

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
  /** False when this process keeps `maxEntries` live sign-outs: a new sign-in is refused (503). */
  acceptsSignIns(): boolean;
  /** Resolves once the file was read at start (at once without a file). */
  loaded(): Promise<void>;
}

export interface RevocationOptions {
  /** The session store, when every process shares it. */
  sharedStore?: SharedSessionStore;
  /** Tells the other workers of this machine (the host publishes on its bus between workers). */
  announce?: (tokenId: string, expiresAtMs: number) => void;
  /** Most live sign-outs kept before new sign-ins are refused (sign-outs are always kept). */
  maxEntries?: number;
  /** The file every process on this home shares (`<home>/.ack/sign-outs`); none: this process only. */
  file?: string;
  /** Tuning of the file (tests): compaction threshold, bytes read per turn of the event loop. */
  fileOptions?: Pick<RevocationFileOptions, 'compactAfter' | 'chunkBytes' | 'staleLockMs'>;
  /** Where a file that cannot be read or written is reported. */
  logger?: Logger;
}

export const REVOKED_KEY_PREFIX = 'ack-revoked:';

interface RevokedRecord {
  revoked: true;
  until: number;
}

/** Expired ids are swept in steps of this many, a turn of the event loop between two. */
const SWEEP_STEP = 16_384;

export function createRevocationList(options: RevocationOptions = {}): RevocationList {
  const { sharedStore, announce, maxEntries = 4_000_000, logger } = options;
  // One line per kind of file failure until the file works again, not one per request.
  const fileFailures = new Set<string>();
  const fileFailed = (what: string, err: unknown) => {
    if (fileFailures.has(what)) return;
    fileFailures.add(what);
    // The file's failures are Node's system errors, which carry their code.
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    logger?.error(`sign-out file ${options.file}: ${what} failed (${reason}); sign-outs are kept in this process only`);
  };
  const local = new TokenIdTable();
  // Expired ids are swept once the list has doubled since the last sweep: amortised O(1) a sign-out.
  let sweepAt = SWEEP_STEP;
  let sweeping = false;
  const sweep = async () => {
    sweeping = true;
    await local.sweep(Date.now(), SWEEP_STEP, () => nextTurn());
    sweepAt = Math.max(SWEEP_STEP, 2 * local.size);
    sweeping = false;
  };
  const remember = (tokenId: string, expiresAtMs: number) => {
    if (expiresAtMs <= Date.now()) return;
    // The latest expiry of a repeated id holds.
    if ((local.get(tokenId) ?? 0) >= expiresAtMs) return;
    local.set(tokenId, expiresAtMs);
    if (local.size >= sweepAt && !sweeping) void sweep();
  };
  /** True while `tokenId` is signed out; an expired one is dropped as it is met (deleting one not kept changes nothing). */
  const known = (tokenId: string): boolean => {
    if ((local.get(tokenId) ?? 0) > Date.now()) return true;
    local.delete(tokenId);
    return false;
  };
  const file =
    options.file === undefined
      ? undefined
      : openRevocationFile(options.file, { ...options.fileOptions, onRecord: remember, liveCount: () => local.size });
  const refresh = async () => {
    if (!file) return;
    // Signed out by an earlier run of this host or by another process on this home.
    await file.refresh().then(
      () => fileFailures.delete('reading'),
      (err: unknown) => fileFailed('reading', err),
    );
  };
  // Read at start, not at the first request: until then a cookie waits for it (isRevoked).
  const startUp = refresh();
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
      if (known(tokenId)) return true;
      if (sessionHoldsIt && sharedStore) return false;
      // Waits for the start-up read, if still under way, then reads what was added since (at once
      // without a file).
      await refresh();
      if (known(tokenId)) return true;
      if (!sharedStore) return false;
      const found = await new Promise<unknown>((resolve, reject) =>
        sharedStore.get(REVOKED_KEY_PREFIX + tokenId, (err, data) => (err ? reject(err as Error) : resolve(data))),
      );
      const record = found as Partial<RevokedRecord> | null | undefined;
      if (record?.revoked !== true || typeof record.until !== 'number' || record.until <= Date.now()) return false;
      remember(tokenId, record.until);
      return true;
    },
    acceptsSignIns: () => local.size < maxEntries,
    loaded: () => startUp,
  };
}
