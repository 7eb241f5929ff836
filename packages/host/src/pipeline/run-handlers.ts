import type { ServerResponse } from 'node:http';
import type { AckRequest, Next, RawHandler } from '../modules/contract.js';

/**
 * Runs raw handlers in order: each either answers or calls `next()`. `done(req, res)` runs when
 * every handler passed; `fail(err, req, res)` when one threw, rejected or called `next(err)`. A
 * handler that ends the response and still calls next is stopped here, so a response is never
 * written twice. Both are made once at start: a request costs one `next` closure.
 */
export function runHandlers(
  handlers: readonly RawHandler[],
  req: AckRequest,
  res: ServerResponse,
  done: (req: AckRequest, res: ServerResponse) => void,
  fail: (err: unknown, req: AckRequest, res: ServerResponse) => void,
): void {
  let index = 0;
  const next: Next = (err?: unknown) => {
    if (err !== undefined) return fail(err, req, res);
    if (res.writableEnded) return;
    const handler = handlers[index++];
    if (!handler) return done(req, res);
    try {
      const result = handler(req, res, next);
      if (result && typeof (result as Promise<void>).then === 'function')
        (result as Promise<void>).catch((e: unknown) => fail(e, req, res));
    } catch (e) {
      fail(e, req, res);
    }
  };
  next();
}
