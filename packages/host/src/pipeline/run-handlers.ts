import type { ServerResponse } from 'node:http';
import type { AckRequest, Next, RawHandler } from '../modules/contract.js';

/**
 * Runs raw handlers in order: each either answers or calls `next()`. `done()` runs when every
 * handler passed; `fail(err)` when one threw, rejected or called `next(err)`. A handler that ends
 * the response and still calls next is stopped here, so a response is never written twice.
 */
export function runHandlers(
  handlers: readonly RawHandler[],
  req: AckRequest,
  res: ServerResponse,
  done: () => void,
  fail: (err: unknown) => void,
): void {
  let index = 0;
  const next: Next = (err?: unknown) => {
    if (err !== undefined) return fail(err);
    if (res.writableEnded) return;
    const handler = handlers[index++];
    if (!handler) return done();
    try {
      const result = handler(req, res, next);
      if (result && typeof (result as Promise<void>).then === 'function') (result as Promise<void>).catch(fail);
    } catch (e) {
      fail(e);
    }
  };
  next();
}
