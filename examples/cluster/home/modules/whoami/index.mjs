// A probe for a cluster: which process answered, who it thinks is signed in, a counter kept in the
// session (so a shared session store shows), and the client address and scheme after the proxy.
export default (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/', (req, res) => {
    req.session.visits = (req.session.visits ?? 0) + 1;
    res.set('Cache-Control', 'no-store').json({
      pid: process.pid,
      url: ctx.host.selfUrl(),
      user: req.ackUser?.UserID ?? null,
      visits: req.session.visits,
      clientIp: req.ack.clientIp,
      protocol: req.ack.protocol,
    });
  });
  return { routes: [{ mount: '/whoami/api', handler: router }] };
};
