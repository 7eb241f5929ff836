import express from 'express';
import type { AckModuleFactory, ModuleContributions } from '../modules/contract.js';

declare module 'express-session' {
  interface SessionData {
    touched?: boolean;
    count?: number;
  }
}

/**
 * A module for tests of the pipeline: a public-phase answer at `/<id>-public`, a static-phase
 * answer at `/<id>-static`, and routes under `/<id>/api` (`touch` writes the session, `json` parses
 * a JSON body (with the host's body reader), `slow?ms=` answers late, `boom` throws, `own-headers`
 * sets its own `X-Frame-Options` and `Vary`, `fresh` answers 304 to its ETag). `events` records starts, closes and each `slow`
 * request as it arrives (`slow:<id>`), for tests that act while a request is in flight.
 */
export function probeModule(events: string[] = []): AckModuleFactory {
  return (ctx) => {
    events.push(`start:${ctx.id}`);
    const router = express.Router();
    router.get('/touch', (req, res) => {
      // With sessions off (`IsSession` false) express-session never ran and there is none.
      const session: typeof req.session | undefined = req.session;
      if (session) session.touched = true;
      res.json({ module: ctx.id, session: Boolean(session) });
    });
    router.get('/count', (req, res) => {
      req.session.count = (req.session.count ?? 0) + 1;
      res.json({ count: req.session.count });
    });
    router.post('/json', ctx.host.bodies.json('probe', 1024 * 1024), (req, res) => res.json({ received: req.body }));
    router.get('/slow', (req, res) => {
      const ms = Number(req.query.ms ?? 500);
      events.push(`slow:${ctx.id}`);
      setTimeout(() => res.json({ waited: ms }), ms);
    });
    router.get('/boom', () => {
      throw new Error('secret internal detail');
    });
    // Its own security header and Vary, which the edge's must not override (docs/pipeline.md).
    router.get('/own-headers', (_req, res) => {
      res.setHeader('X-Frame-Options', 'DENY');
      res.setHeader('Vary', 'Accept');
      res.json({ own: true });
    });
    // Express's own revalidation: a 304 when If-None-Match holds this ETag (`res.send`'s freshness check).
    router.get('/fresh', (_req, res) => {
      res.setHeader('ETag', '"probe-fresh"');
      res.setHeader('Cache-Control', 'no-cache');
      res.send('fresh');
    });
    router.get('/whoami', (req, res) => res.json({ clientIp: req.ack.clientIp }));
    const contributions: ModuleContributions = {
      public: [
        (req, res, next) => {
          if (req.ack.rawPath !== `/${ctx.id}-public`) return next();
          res.setHeader('Content-Type', 'text/plain');
          res.end(`public:${ctx.id}`);
        },
      ],
      static: [
        (req, res, next) => {
          if (req.ack.rawPath !== `/${ctx.id}-static`) return next();
          res.setHeader('Content-Type', 'text/plain');
          res.end(`static:${ctx.id}`);
        },
      ],
      routes: [{ mount: `/${ctx.id}/api`, handler: router }],
      close() {
        events.push(`close:${ctx.id}`);
      },
    };
    return contributions;
  };
}
