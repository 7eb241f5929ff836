import { once } from 'node:events';
import net from 'node:net';
import type { DatabaseAddress } from './databases.js';

/**
 * A TCP relay on loopback in front of a real database, for the store-outage tests: it can drop
 * every connection (`reset`), stop listening altogether (`cut`, then `listen` on the same port
 * again), swallow every byte both ways without closing anything (`swallow`: a firewall dropping
 * packets, a frozen server), or deliver each chunk late (`slow`).
 */
export class TcpRelay {
  private server: net.Server | undefined;
  private swallowing = false;
  private delayMs = 0;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly target: DatabaseAddress) {}

  /** Listens on `port` (0: a free one) and resolves with the port. */
  async listen(port = 0): Promise<number> {
    const server = net.createServer((client) => this.relay(client));
    this.server = server;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as net.AddressInfo).port;
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pass = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (this.swallowing) return;
        if (this.delayMs > 0) setTimeout(() => to.write(chunk), this.delayMs);
        else to.write(chunk);
      });
    pass(client, upstream);
    pass(upstream, client);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        other.destroy();
      });
    }
  }

  swallow(): void {
    this.swallowing = true;
  }
  forward(): void {
    this.swallowing = false;
  }
  /** Every chunk, each way, arrives this late (in order). */
  slow(ms: number): void {
    this.delayMs = ms;
  }
  /** Drops every open connection (the database restarted); new ones are relayed. */
  reset(): void {
    for (const socket of this.sockets) socket.destroy();
  }
  /** Drops every connection and stops listening: the database is gone until `listen` again. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.reset();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
