import { ProblemError, type AckModuleFactory } from '@ack/host';

/**
 * A module of this project, written against the module contract (docs/api.md): one router of
 * APIs under `/greeter/api`, answered after the session and sign-in phases.
 */
export const greeterModule: AckModuleFactory = (ctx) => {
  const configured = ctx.moduleJson.ModuleConfig?.['Greeting'];
  const greeting = typeof configured === 'string' ? configured : 'Hello';
  const router = ctx.host.createRouter();

  router.get('/hello', (req, res) => {
    const name = typeof req.query['name'] === 'string' && req.query['name'] !== '' ? req.query['name'] : 'world';
    res.json({ greeting: `${greeting}, ${name}`, signedIn: req.ackUser !== undefined });
  });

  // Errors are thrown as problems; the host writes them as application/problem+json.
  router.get('/orders/:id', (req) => {
    throw new ProblemError({
      status: 404,
      code: 'greeter.no_such_order',
      detail: `There is no order ${req.params['id'] ?? ''}.`,
    });
  });

  ctx.logger.info('ready: GET /greeter/api/hello');
  return {
    routes: [{ mount: '/greeter/api', handler: router }],
    close: () => ctx.logger.info('closed'),
  };
};
