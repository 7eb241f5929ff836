import { createHash } from 'node:crypto';
import type { RawHandler } from '../modules/contract.js';
import type { SyncPush } from './view.js';

/**
 * The last sync pushes this process answered (docs/operations.md "Status page"), seen at the edge
 * when each answer ends. Who pushed is a fingerprint of the Basic token, never the token.
 */
export interface PushLog {
  /** An edge handler: notes each upload or batch the `sync` capability answers. */
  readonly handler: RawHandler;
  recent(): SyncPush[];
}

const KINDS = new Set(['upload', 'batch']);

/**
 * `sha256:` and the first 12 hex digits of the token's SHA-256 (the Basic user name, as sync reads
 * it: `printf %s TOKEN | sha256sum` gives the same digits); `anonymous` without a Basic credential.
 */
export function tokenFingerprint(authorization: string | undefined): string {
  const m = /^Basic[ \t]+(\S+)/i.exec(authorization ?? '');
  if (!m) return 'anonymous';
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  const token = (colon === -1 ? text : text.slice(0, colon)).trim();
  return `sha256:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

export function createPushLog(keep = 20): PushLog {
  const pushes: SyncPush[] = [];
  const handler: RawHandler = (req, res, next) => {
    if (req.method === 'POST' || req.method === 'PUT') {
      res.once('close', () => {
        if (req.ack.answeredBy?.route !== 'sync') return;
        const kind = req.ack.rawPath.slice(req.ack.rawPath.lastIndexOf('/') + 1).toLowerCase();
        if (!KINDS.has(kind)) return;
        const status = res.writableEnded ? res.statusCode : 499;
        const bytes = Number(req.headers['content-length'] ?? 0);
        pushes.unshift({
          who: tokenFingerprint(req.headers.authorization),
          what: `${req.method} ${kind}`,
          bytes: Number.isFinite(bytes) && bytes > 0 ? bytes : 0,
          when: new Date().toISOString(),
          status,
          outcome: status >= 500 || status === 499 ? 'failed' : status >= 400 ? 'refused' : 'ok',
        });
        if (pushes.length > keep) pushes.length = keep;
      });
    }
    next();
  };
  return { handler, recent: () => pushes.slice() };
}
