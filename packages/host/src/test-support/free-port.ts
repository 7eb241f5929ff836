import dgram from 'node:dgram';
import net from 'node:net';

export interface FreePortOptions {
  /** The address the port must be free on (default `127.0.0.1`; `::` for both loopbacks). */
  host?: string;
  /**
   * The same port number must be free for UDP too (HTTP/3 listens on the UDP port of its TCP port's
   * number, docs/protocols.md); a number taken for UDP is skipped.
   */
  udp?: boolean;
}

/**
 * A port nothing listens on: the system picks one for a listener on `host`, which is closed again
 * before the number is returned. For a server a test starts in another process, or for "cannot
 * reach" cases. Another process may take the number in between, which tests accept.
 */
export async function freePort(options: FreePortOptions = {}): Promise<number> {
  const host = options.host ?? '127.0.0.1';
  for (;;) {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!options.udp || (await udpFree(port, host))) return port;
  }
}

async function udpFree(port: number, host: string): Promise<boolean> {
  const udp = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  const free = await new Promise<boolean>((resolve) => {
    udp.once('error', () => resolve(false));
    udp.bind(port, host, () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => udp.close(() => resolve()));
  return free;
}
