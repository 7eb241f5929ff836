import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// Contract screens and the static root share one handler, but not one route label on /metrics
// (docs/operations.md "Metrics"): a dashboard tells screens from plain files.
const KEY = 'route-label-key';
const hosts = useTestHosts();

const countOf = (text: string, route: string) =>
  Number(
    new RegExp(
      `^http_server_request_duration_seconds_count\\{http_request_method="GET",http_response_status_code="200",http_route="${route}"\\} (\\d+)$`,
      'm',
    ).exec(text)?.[1] ?? 0,
  );

describe('route labels of the static phase', () => {
  it('counts a contract screen under screen and a static-root file under static, each as often as asked', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], HostAccessID: KEY } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot' },
      'modules/wwwroot/wwwroot/plain.txt': 'plain',
      'contracts/wwwroot/HDS/page.html': '<p>screen</p>',
    });
    const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
    // Twice each: the second is answered from the remembered resolution and must be labelled alike.
    for (let i = 0; i < 2; i++) {
      expect(await (await fetch(`${url}/view/page.html`)).text()).toBe('<p>screen</p>');
      expect(await (await fetch(`${url}/plain.txt`)).text()).toBe('plain');
    }
    expect((await fetch(`${url}/plain.txt`)).status).toBe(200);
    const text = await (await fetch(`${url}/metrics`, { headers: { hostAccessID: KEY } })).text();
    expect(countOf(text, 'screen')).toBe(2);
    expect(countOf(text, 'static')).toBe(3);
  });
});
