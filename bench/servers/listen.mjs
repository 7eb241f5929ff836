// Every Node peer listens on a loopback port and prints one JSON line `{"url": ...}`.
export function listen(server, scheme = 'http') {
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    process.stdout.write(JSON.stringify({ url: `${scheme}://127.0.0.1:${port}`, pid: process.pid }) + '\n');
  });
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}
