// A small working module (see docs/modules.md): one API route, answered after the session phase.
// The host finds this file through "EntryPoint" in module.json and calls the default export once.
export default function helloModule(ctx) {
  const greeting = String(ctx.moduleJson.ModuleConfig?.Greeting ?? 'Hello');
  const router = ctx.host.createRouter();
  router.get('/', (req, res) => {
    res.json({ module: ctx.id, greeting, signedIn: Boolean(req.ackUser) });
  });
  ctx.logger.info(`ready: GET /hello/api`);
  return {
    routes: [{ mount: '/hello/api', handler: router }],
    close() {
      ctx.logger.info('closed');
    },
  };
}
