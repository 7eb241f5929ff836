import type { Next, RawRequest, RawResponse } from '../http/exchange.js';

/** A raw phase over the request and response types of one entry (a `RawHandler` fits every entry). */
export type PhaseHandler<Req, Res> = (req: Req, res: Res, next: Next) => void | Promise<void>;

/**
 * Runs raw handlers in order: each either answers or calls `next()`. `done(req, res)` runs when
 * every handler passed; `fail(err, req, res)` when one threw, rejected or called `next(err)`. A
 * handler that ends the response and still calls next is stopped here, so a response is never
 * written twice. Both are made once at start: a request costs one `next` closure.
 */
export function runHandlers<Req extends RawRequest, Res extends RawResponse>(
  handlers: readonly PhaseHandler<Req, Res>[],
  req: Req,
  res: Res,
  done: (req: Req, res: Res) => void,
  fail: (err: unknown, req: Req, res: Res) => void,
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
