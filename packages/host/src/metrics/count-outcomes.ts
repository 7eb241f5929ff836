import type { Request, RequestHandler } from 'express';
import type { CounterChild, HostCounters } from '../modules/contract.js';

/**
 * Express middleware for a router whose requests are a few kinds of operation (sync upload,
 * batch, listing; a contract sync): counts each by kind and outcome (`ok` for 2xx and 3xx,
 * `refused` for 4xx, `failed` for 5xx or a response cut short) in `<prefix>_requests_total`, and
 * the request body bytes by kind in `<prefix>_bytes_total` (docs/operations.md "The host's own").
 * `kindOf` names a request's kind from a fixed set, so the labels stay few; every child is made here,
 * at start.
 */
export function countOutcomes(
  counters: HostCounters,
  prefix: string,
  what: string,
  kinds: readonly string[],
  kindOf: (req: Request) => string,
): RequestHandler {
  const requests = counters.counter(`${prefix}_requests_total`, `${what}, by kind and outcome.`);
  const bytes = counters.counter(`${prefix}_bytes_total`, `Request body bytes of ${what.toLowerCase()}, by kind.`);
  const cells = new Map<string, { ok: CounterChild; refused: CounterChild; failed: CounterChild; bytes: CounterChild }>(
    kinds.map((kind) => [
      kind,
      {
        ok: requests.child({ kind, outcome: 'ok' }),
        refused: requests.child({ kind, outcome: 'refused' }),
        failed: requests.child({ kind, outcome: 'failed' }),
        bytes: bytes.child({ kind }),
      },
    ]),
  );
  return (req, res, next) => {
    const cell = cells.get(kindOf(req));
    if (cell) {
      res.once('close', () => {
        const status = res.writableEnded ? res.statusCode : 500;
        (status >= 500 ? cell.failed : status >= 400 ? cell.refused : cell.ok).inc();
        const length = Number(req.headers['content-length'] ?? 0);
        if (length > 0) cell.bytes.inc(length);
      });
    }
    next();
  };
}
