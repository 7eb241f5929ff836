import http from 'node:http';
import type { Socket } from 'node:net';

/** Whether an `Upgrade` header offers WebSocket among its protocols (RFC 9110 7.8). */
export function offersWebSocket(upgrade: string | undefined): boolean {
  if (upgrade === undefined) return false;
  return upgrade.split(',').some((offer) => offer.trim().toLowerCase() === 'websocket');
}

/**
 * The request class of the host's HTTP/1.1 servers (docs/websocket.md). Node hands every request
 * that offers an upgrade to the server's `upgrade` listeners as soon as a module offers a socket,
 * whatever protocol it offers: `curl --http2` (`Upgrade: h2c`) would reach the WebSocket rules and
 * get 404 for a file that exists. RFC 9113 lets a server ignore an upgrade offer, so only
 * WebSocket counts as one here, and any other offer is answered as the HTTP/1.1 request it also is,
 * as Node does when nothing listens for upgrades. (`CONNECT` keeps Node's own handling.)
 */
export class AckIncomingMessage extends http.IncomingMessage {
  constructor(socket: Socket) {
    super(socket);
    // An own property, not one on the prototype: Express gives each request its own prototype.
    let offered = false;
    Object.defineProperty(this, 'upgrade', {
      configurable: true,
      enumerable: true,
      // Node's parser sets it before the headers are in and reads it after.
      get: (): boolean => offered && (this.method === 'CONNECT' || offersWebSocket(this.headers.upgrade)),
      set: (value: boolean) => (offered = value),
    });
  }
}
