import { afterEach, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import { startSignInHost } from '../test-support/sign-in-fixture.js';

// module.json values the .NET host reads as text mean the same here: "true", "1", "60".
let t: TestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('quoted scalars in the wwwroot module.json', () => {
  it('CreateIDPolicy with "true" and "1" limits create-id to one per window', async () => {
    const origin = 'http://screens.example:8080';
    t = await startSignInHost({
      appSettings: { WithOrigins: [origin] },
      moduleConfig: { CreateIDPolicy: { IsEnabled: 'true', PermitLimit: '1', WindowSeconds: '60' } },
    });
    const first = await fetch(`${t.url}/wwwroot/api/index/create-id`, { headers: { origin } });
    const second = await fetch(`${t.url}/wwwroot/api/index/create-id`, { headers: { origin } });
    expect([first.status, second.status]).toEqual([200, 429]);
  });

  it('IsEnabledHtmxSample "false" turns the sample off in development, "true" on in production', async () => {
    t = await startSignInHost({
      appSettings: { RunningEnvironment: 'D' },
      moduleConfig: { IsEnabledHtmxSample: 'false' },
    });
    expect((await fetch(`${t.url}/wwwroot/api/htmx/contacts`)).status).toBe(404);
    await t.close();
    t = await startSignInHost({
      appSettings: { RunningEnvironment: 'P' },
      moduleConfig: { IsEnabledHtmxSample: 'TRUE' },
    });
    expect((await fetch(`${t.url}/wwwroot/api/htmx/contacts`)).status).toBe(200);
  });
});
