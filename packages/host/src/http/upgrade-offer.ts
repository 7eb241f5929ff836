import http from 'node:http';

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
  /** What Node's parser set `upgrade` to: the request offers some upgrade. */
  declare upgradeOffered: boolean | null;
}

// The accessor sits on the prototype, defined once: one on each request (a closure and a
// `defineProperty` per request) cost about a third of the static path's throughput. Node's parser
// sets and reads `upgrade` before the request is handed on; once Express gives the request its own
// prototype, `upgrade` reads as undefined, which Node takes as no upgrade (docs/websocket.md).
Object.defineProperty(AckIncomingMessage.prototype, 'upgrade', {
  configurable: true,
  get(this: AckIncomingMessage): boolean {
    return this.upgradeOffered === true && (this.method === 'CONNECT' || offersWebSocket(this.headers.upgrade));
  },
  set(this: AckIncomingMessage, value: boolean | null) {
    this.upgradeOffered = value;
  },
});
