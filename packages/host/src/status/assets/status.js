/* global document */
// The status page (docs/operations.md "Status page"): the credential typed into the form is kept in
// this page's memory only and sent as the hostAccessID header; figures are polled every second.
'use strict';
(() => {
  const base = document.body.dataset.base || '/status/';
  const $ = (id) => document.getElementById(id);
  let credential = '';
  let timer = 0;

  const seconds = (s) => (s === null ? '–' : s < 1 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`);
  const percent = (r) => (r === null ? '–' : `${(r * 100).toFixed(2)} %`);
  const rate = (r) => (r === null ? '–' : r.toFixed(1));
  const text = (id, value, bad) => {
    const el = $(id);
    el.textContent = String(value);
    el.classList.toggle('bad', bad === true);
    el.classList.toggle('good', bad === false);
  };
  const row = (cells) => {
    const tr = document.createElement('tr');
    for (const [value, bad] of cells) {
      const td = document.createElement('td');
      td.textContent = String(value);
      if (bad !== undefined) td.className = bad ? 'bad' : 'good';
      tr.append(td);
    }
    return tr;
  };
  const store = (s) => (s.shared ? (s.up ? 'up' : 'unreachable') : 'in process');

  function draw(view) {
    const t = view.total;
    text('rps', rate(t.requestsPerSecond));
    text('errors', percent(t.errorRate), t.errorRate !== null && t.errorRate > 0);
    text('p50', seconds(t.p50));
    text('p95', seconds(t.p95));
    text('connections', t.openConnections);
    text('ready', t.ready ? 'ready' : 'not ready', !t.ready);
    text('window', view.windowSeconds === null ? '–' : view.windowSeconds.toFixed(1));
    text('updated', new Date(view.at).toLocaleTimeString());
    $('workers').tBodies[0].replaceChildren(
      ...view.workers.map((w) =>
        row([
          [w.worker === null ? 'single' : w.worker],
          [w.pid],
          [rate(w.requestsPerSecond)],
          [percent(w.errorRate)],
          [seconds(w.p50)],
          [seconds(w.p95)],
          [w.openConnections],
          [w.upgradedConnections],
          [w.activeRequests],
          [store(w.sessionStore), w.sessionStore.shared && !w.sessionStore.up],
          [w.ready ? 'ready' : `not ready: ${w.failed.join(', ')}`, !w.ready],
        ]),
      ),
    );
    $('pushes').tBodies[0].replaceChildren(
      ...view.pushes.map((p) =>
        row([
          [new Date(p.when).toLocaleTimeString()],
          [p.who],
          [p.what],
          [p.bytes],
          [`${p.status} ${p.outcome}`, p.outcome !== 'ok'],
        ]),
      ),
    );
  }

  async function poll() {
    let res;
    try {
      res = await fetch(`${base}status.json`, { headers: { hostAccessID: credential }, cache: 'no-store' });
    } catch {
      text('state', 'The host did not answer; trying again.', true);
      return;
    }
    if (res.status === 401) {
      clearInterval(timer);
      credential = '';
      $('figures').hidden = true;
      $('sign-in').hidden = false;
      text('state', 'The HostAccessID was refused.', true);
      return;
    }
    if (!res.ok) {
      text('state', `The host answered ${res.status}; trying again.`, true);
      return;
    }
    draw(await res.json());
    $('figures').hidden = false;
    $('sign-in').hidden = true;
    text('state', 'Live.', false);
  }

  $('sign-in').addEventListener('submit', (event) => {
    event.preventDefault();
    credential = $('credential').value;
    $('credential').value = '';
    clearInterval(timer);
    void poll();
    timer = setInterval(() => void poll(), 1000);
  });
})();
