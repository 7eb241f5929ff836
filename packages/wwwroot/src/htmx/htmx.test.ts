import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import { startSignInHost } from '../test-support/sign-in-fixture.js';
import { escapeHtml } from './render.js';

const BASE = '/wwwroot/api/htmx';
const HX = { 'HX-Request': 'true' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const rowIds = (html: string) => [...html.matchAll(/<tr id="contact-(\d+)"/g)].map((m) => Number(m[1]));

describe('htmx sample routes', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startSignInHost();
  });
  afterAll(() => t.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}${BASE}${path}`, { headers, redirect: 'manual' });
  const send = (method: string, path: string, form: Record<string, string>, headers: Record<string, string> = HX) =>
    fetch(`${t.url}${BASE}${path}`, {
      method,
      headers: { ...FORM, ...headers },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });

  it('the list: a fragment to htmx, a whole page otherwise; load more pages through', async () => {
    const fragment = await get('/contacts', HX);
    expect(fragment.status).toBe(200);
    expect(fragment.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    expect(fragment.headers.get('vary')).toMatch(/HX-Request/i);
    const html = await fragment.text();
    expect(html).not.toMatch(/<!doctype/i);
    expect(rowIds(html)).toHaveLength(10);
    expect(html).toContain(`hx-get="${BASE}/contacts/more?offset=10"`);

    const whole = await (await get('/contacts')).text();
    expect(whole).toMatch(/^<!doctype html>/);
    expect(whole).toContain(`<script src="${BASE}/htmx.min.js"></script>`);
    expect(rowIds(whole)).toEqual(rowIds(html));

    const more = await (await get('/contacts/more?offset=10', HX)).text();
    const next = rowIds(more);
    expect(next).toHaveLength(10);
    expect(next.some((id) => rowIds(html).includes(id))).toBe(false);
    expect(more).toContain('id="load-more"');
    const last = await (await get('/contacts/more?offset=20', HX)).text();
    expect(rowIds(last).length).toBeGreaterThan(0);
    expect(last).not.toContain('id="load-more"');
    // Without htmx, "load more" is an ordinary next page.
    const plain = await get('/contacts/more?offset=10');
    expect(plain.status).toBe(303);
    expect(plain.headers.get('location')).toBe(`${BASE}/contacts?offset=10`);
  });

  it('details push their URL; quick view and edit form are fragments; unknown ids are 404', async () => {
    const details = await get('/contacts/1', HX);
    expect(details.headers.get('hx-push-url')).toBe(`${BASE}/contacts/1`);
    expect(await details.text()).toContain('id="contact-details" data-contact-id="1"');
    const reload = await get('/contacts/1');
    const page = await reload.text();
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('data-contact-id="1"');
    expect(await (await get('/contacts/2/quick', HX)).text()).toMatch(/^<aside class="quick" data-contact-id="2">/);
    expect(await (await get('/contacts/2/edit', HX)).text()).toContain(`hx-put="${BASE}/contacts/2"`);
    for (const id of ['9999', 'abc', '0', '-1', '1.5']) {
      const res = await get(`/contacts/${id}`, HX);
      expect(res.status, id).toBe(404);
      expect(await res.text()).toContain('There is no contact');
    }
  });

  it('create: 201 with details, HX-Trigger and HX-Push-Url; invalid input re-renders the form with 422', async () => {
    const created = await send('POST', '/contacts', {
      name: 'Katherine Johnson',
      email: 'kj@example.com',
      phone: '+1 555 0000',
    });
    expect(created.status).toBe(201);
    const id = Number(/data-contact-id="(\d+)"/.exec(await created.clone().text())![1]);
    expect(JSON.parse(created.headers.get('hx-trigger')!)).toEqual({ 'contacts-changed': { id } });
    expect(created.headers.get('hx-push-url')).toBe(`${BASE}/contacts/${id}`);
    expect(await created.text()).toContain(
      '<div id="messages" role="status" hx-swap-oob="true">Created Katherine Johnson.</div>',
    );
    expect(rowIds(await (await get('/contacts', HX)).text())[0]).toBe(id); // newest first

    const invalid = await send('POST', '/contacts', { name: '', email: 'not-an-address', phone: 'call me' });
    expect(invalid.status).toBe(422);
    expect(invalid.headers.get('hx-retarget')).toBe('#editor');
    expect(invalid.headers.get('hx-reswap')).toBe('innerHTML');
    const form = await invalid.text();
    expect(form).toContain('id="contact-form"');
    expect([...form.matchAll(/data-field="(\w+)"/g)].map((m) => m[1])).toEqual(['name', 'email', 'phone']);
    expect(form).toContain('value="not-an-address"');

    // Without htmx: post/redirect/get, and a whole page with the form on error.
    const plain = await send('POST', '/contacts', { name: 'Plain Form', email: 'plain@example.com' }, {});
    expect(plain.status).toBe(303);
    expect(plain.headers.get('location')).toMatch(new RegExp(`^${BASE}/contacts/\\d+$`));
    const plainInvalid = await send('POST', '/contacts', { name: 'x' }, {});
    expect(plainInvalid.status).toBe(422);
    expect(await plainInvalid.text()).toMatch(/^<!doctype html>[\s\S]*data-field="email"/);
  });

  it('escapes every user value in fragments and pages', async () => {
    const evil = '<img src=x onerror=alert(1)>"\'&`';
    const created = await send('POST', '/contacts', { name: evil, email: 'evil@example.com', phone: '' });
    const id = Number(/data-contact-id="(\d+)"/.exec(await created.text())![1]);
    for (const path of ['/contacts', `/contacts/${id}`, `/contacts/${id}/quick`, `/contacts/${id}/edit`]) {
      for (const headers of [HX, {}]) {
        const html = await (await get(path, headers)).text();
        expect(html, path).not.toContain('<img src=x');
        expect(html, path).toContain(escapeHtml(evil));
      }
    }
    const invalid = await (
      await send('POST', '/contacts', { name: evil, email: '"><script>alert(1)</script>' })
    ).text();
    expect(invalid).not.toContain('<script>alert(1)');
    expect(invalid).toContain('value="&#34;&#62;&#60;script&#62;');
    expect(await get(`/contacts/%3Cscript%3E`, HX).then((r) => r.text())).not.toContain('<script>');
  });

  it('update (PUT, or POST without htmx) and delete (DELETE) with the HX headers', async () => {
    const created = await send('POST', '/contacts', { name: 'To Change', email: 'change@example.com' });
    const id = Number(/data-contact-id="(\d+)"/.exec(await created.text())![1]);

    const updated = await send('PUT', `/contacts/${id}`, {
      name: 'Changed',
      email: 'changed@example.com',
      phone: '123',
    });
    expect(updated.status).toBe(200);
    expect(JSON.parse(updated.headers.get('hx-trigger')!)).toEqual({ 'contacts-changed': { id } });
    expect(await updated.text()).toContain('<h2>Changed</h2>');
    const bad = await send('PUT', `/contacts/${id}`, { name: 'Changed', email: '' });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain(`hx-put="${BASE}/contacts/${id}"`);
    expect((await send('POST', `/contacts/${id}`, { name: 'Posted', email: 'p@example.com' }, {})).status).toBe(303);
    expect(await (await get(`/contacts/${id}`, HX)).text()).toContain('<h2>Posted</h2>');
    expect((await send('PUT', '/contacts/99999', { name: 'x', email: 'x@example.com' })).status).toBe(404);

    const deleted = await fetch(`${t.url}${BASE}/contacts/${id}`, { method: 'DELETE', headers: HX });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.get('hx-retarget')).toBe(`#contact-${id}`);
    expect(deleted.headers.get('hx-reswap')).toBe('delete');
    expect(JSON.parse(deleted.headers.get('hx-trigger')!)).toEqual({ 'contact-deleted': { id } });
    expect(await deleted.text()).toContain('Deleted Posted.');
    expect((await get(`/contacts/${id}`, HX)).status).toBe(404);
    expect((await fetch(`${t.url}${BASE}/contacts/${id}`, { method: 'DELETE', headers: HX })).status).toBe(404);
  });

  it('serves htmx.min.js from the htmx.org package with an ETag', async () => {
    const res = await get('/htmx.min.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    const body = await res.text();
    expect(body).toMatch(/htmx/);
    expect(body.length).toBeGreaterThan(10_000);
    const again = await get('/htmx.min.js', { 'if-none-match': res.headers.get('etag')! });
    expect(again.status).toBe(304);
  });

  it("serves the sample's stylesheet, which the whole page and the example screen link", async () => {
    const css = await get('/contacts.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('font-family');
    expect(await (await get('/contacts')).text()).toContain(`<link rel="stylesheet" href="${BASE}/contacts.css">`);
  });
});

describe('htmx sample outside development', () => {
  it('has no contact routes in RunningEnvironment P unless IsEnabledHtmxSample is true; htmx.min.js stays', async () => {
    const off = await startSignInHost({ appSettings: { RunningEnvironment: 'P' } });
    const on = await startSignInHost({
      appSettings: { RunningEnvironment: 'P' },
      moduleConfig: { IsEnabledHtmxSample: true },
    });
    try {
      expect((await fetch(`${off.url}${BASE}/contacts`)).status).toBe(404);
      expect((await fetch(`${off.url}${BASE}/htmx.min.js`)).status).toBe(200);
      expect((await fetch(`${on.url}${BASE}/contacts`)).status).toBe(200);
    } finally {
      await off.close();
      await on.close();
    }
  });
});
