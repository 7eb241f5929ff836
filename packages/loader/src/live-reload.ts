let started = false;

/** Origin and path, lower-cased: the host matches paths case-insensitively and without the query. */
const key = (url: string) => {
  const u = new URL(url, location.href);
  return (u.origin + u.pathname).toLowerCase();
};

/**
 * Live reload (docs/live-reload.md): listens on the host's socket (named by the manifest's
 * `Ack-Live-Reload` header) and, when it reconnects after the host went away, backs off from half
 * a second to ten. Once per page.
 */
export function liveReload(base: string, socketPath: string): void {
  if (started || typeof WebSocket === 'undefined') return;
  started = true;
  const url = new URL(base + socketPath, location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  let delay = 500;
  const connect = () => {
    const socket = new WebSocket(url.href);
    socket.onopen = () => (delay = 500);
    socket.onmessage = (event) => {
      try {
        const message = JSON.parse(event.data);
        if (message.type === 'changed') applyChanges(message.paths.map((p: string) => key(base + p)));
      } catch {
        // not a message of this host: ignore
      }
    };
    socket.onclose = () => {
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    };
  };
  connect();
}

/**
 * A changed stylesheet this page links is swapped in place (fetched again under a cache-busting
 * query): no reload, so the page keeps its state. Any other changed file this page loaded (the
 * page itself, a script, an image, a text asset) reloads the page. Files it did not load are ignored.
 */
function applyChanges(changed: string[]): void {
  const page = key(location.href);
  const used = new Set([page, page + 'index.html']);
  for (const entry of performance.getEntriesByType('resource')) used.add(key(entry.name));
  let reload = false;
  for (const file of changed) {
    let swapped = false;
    document.querySelectorAll<HTMLLinkElement>('link[rel~=stylesheet]').forEach((link) => {
      if (key(link.href) !== file) return;
      const fresh = new URL(link.href);
      fresh.searchParams.set('ack-reload', String(Date.now()));
      link.href = fresh.href;
      swapped = true;
    });
    if (!swapped && used.has(file)) reload = true;
  }
  if (reload) location.reload();
}
