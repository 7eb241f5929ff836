import fs from 'node:fs';
import { createRequire } from 'node:module';
import express, { type Request, type Response, type Router } from 'express';
import type { WwwrootRuntime } from '../runtime.js';
import { fixedBody, send } from '../serving/index.js';
import {
  checkContact,
  createContactStore,
  parseContactId,
  type Contact,
  type ContactErrors,
  type ContactFields,
} from './contacts-store.js';
import {
  BASE,
  PAGE_SIZE,
  STYLESHEET,
  contactDetails,
  contactForm,
  contactQuickView,
  contactRows,
  contactTable,
  messageOob,
  notFound,
  page,
} from './render.js';

/**
 * `/wwwroot/api/htmx/*` (docs/helper-apis.md): the htmx sample. An in-memory contact list whose routes answer
 * HTML fragments to htmx (`HX-Request: true`) and whole pages to everyone else, so that every URL
 * htmx pushes into the address bar also works on reload. `htmx.min.js` (npm `htmx.org`) is served
 * here too, so any application home can use it without a copy in its static root.
 *
 * The contact routes exist when `ModuleConfig:IsEnabledHtmxSample` is true, or, when it is not
 * set, in the development environment (`RunningEnvironment` D): a production host does not get a
 * public, writable sample list by default.
 */
export function createHtmxRouter(runtime: WwwrootRuntime): Router {
  const router = express.Router();
  // A fixed asset (`htmx.min.js` from the installed `htmx.org` package, the sample's CSS), read once.
  const assetHandler = (body: Buffer, contentType: string) => {
    const asset = fixedBody(body, contentType, 'public, max-age=3600', {
      compress: runtime.settings.serving.compressFiles,
    });
    return (req: Request, res: Response) => send(req, res, asset);
  };
  router.get(
    '/htmx.min.js',
    assetHandler(
      fs.readFileSync(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js')),
      'text/javascript; charset=utf-8',
    ),
  );
  router.get('/contacts.css', assetHandler(Buffer.from(STYLESHEET), 'text/css; charset=utf-8'));

  if (!runtime.settings.htmxSampleEnabled) return router;

  // Writes (POST, PUT, DELETE) come from this host's own pages only.
  router.use(runtime.ctx.host.refuseCrossSite);
  const store = createContactStore();
  const form = runtime.ctx.host.bodies.form(16 * 1024, 20);

  router.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Vary', 'HX-Request');
    next();
  });

  const listPage = (offset = 0) => contactTable(store.page(offset, PAGE_SIZE), offset, store.count());

  router.get('/contacts', (req, res) => {
    const offset = parseOffset(req.query.offset);
    sendHtml(req, res, 200, listPage(offset), () => page({ list: listPage(offset) }));
  });

  // Load more: the next rows and a new "load more" row, replacing the old one.
  router.get('/contacts/more', (req, res) => {
    const offset = parseOffset(req.query.offset);
    if (!isHtmx(req)) return res.redirect(303, `${BASE}/contacts?offset=${offset}`);
    sendHtml(req, res, 200, contactRows(store.page(offset, PAGE_SIZE), offset, store.count()), () => '');
  });

  router.get('/contacts/new', (req, res) => {
    const empty: ContactFields = { name: '', email: '', phone: '' };
    sendHtml(req, res, 200, contactForm(empty, {}), () => page({ list: listPage(), editor: contactForm(empty, {}) }));
  });

  router.post('/contacts', form, (req, res) => {
    const { fields, errors } = checkContact(req.body);
    const created = Object.keys(errors).length === 0 ? store.create(fields) : undefined;
    if (!created) {
      if (Object.keys(errors).length === 0) errors.form = 'The sample list is full: delete a contact first.';
      return sendInvalid(req, res, fields, errors);
    }
    afterChange(req, res, created, `Created ${created.name}.`, 201);
  });

  const withContact =
    (handler: (req: Request, res: Response, contact: Contact) => void) => (req: Request, res: Response) => {
      const raw = String(req.params.id);
      const id = parseContactId(raw);
      const contact = id === undefined ? undefined : store.get(id);
      if (!contact)
        return sendHtml(req, res, 404, notFound(raw), () => page({ list: listPage(), editor: notFound(raw) }));
      handler(req, res, contact);
    };

  router.get(
    '/contacts/:id',
    withContact((req, res, c) => {
      if (isHtmx(req)) res.setHeader('HX-Push-Url', `${BASE}/contacts/${c.id}`);
      sendHtml(req, res, 200, contactDetails(c), () => page({ list: listPage(), editor: contactDetails(c) }));
    }),
  );

  router.get(
    '/contacts/:id/quick',
    withContact((req, res, c) => {
      sendHtml(req, res, 200, contactQuickView(c), () => page({ list: listPage(), quick: contactQuickView(c) }));
    }),
  );

  router.get(
    '/contacts/:id/edit',
    withContact((req, res, c) => {
      sendHtml(req, res, 200, contactForm(c, {}, c.id), () =>
        page({ list: listPage(), editor: contactForm(c, {}, c.id) }),
      );
    }),
  );

  // htmx sends PUT; a browser without script posts the same form.
  const update = withContact((req, res, c) => {
    const { fields, errors } = checkContact(req.body);
    if (Object.keys(errors).length > 0) return sendInvalid(req, res, fields, errors, c.id);
    const updated = store.update(c.id, fields)!;
    afterChange(req, res, updated, `Saved ${updated.name}.`, 200);
  });
  router.put('/contacts/:id', form, update);
  router.post('/contacts/:id', form, update);

  const remove = withContact((req, res, c) => {
    store.delete(c.id);
    if (!isHtmx(req)) return res.redirect(303, `${BASE}/contacts`);
    // Whatever element asked, the row of this contact goes; the message line says so.
    res.setHeader('HX-Retarget', `#contact-${c.id}`);
    res.setHeader('HX-Reswap', 'delete');
    res.setHeader('HX-Trigger', JSON.stringify({ 'contact-deleted': { id: c.id } }));
    sendHtml(req, res, 200, messageOob(`Deleted ${c.name}.`), () => '');
  });
  router.delete('/contacts/:id', remove);
  router.post('/contacts/:id/delete', remove);

  /** After create or update: details in the editor, the list reloads, the URL follows. */
  function afterChange(req: Request, res: Response, c: Contact, message: string, status: number) {
    if (!isHtmx(req)) return res.redirect(303, `${BASE}/contacts/${c.id}`);
    res.setHeader('HX-Trigger', JSON.stringify({ 'contacts-changed': { id: c.id } }));
    res.setHeader('HX-Push-Url', `${BASE}/contacts/${c.id}`);
    sendHtml(req, res, status, contactDetails(c) + messageOob(message), () => '');
  }

  /** Validation failed: the form again with its values and errors, 422, into the editor. */
  function sendInvalid(req: Request, res: Response, fields: ContactFields, errors: ContactErrors, contactId?: number) {
    const html = contactForm(fields, errors, contactId);
    if (isHtmx(req)) {
      res.setHeader('HX-Retarget', '#editor');
      res.setHeader('HX-Reswap', 'innerHTML');
    }
    sendHtml(req, res, 422, html, () => page({ list: listPage(), editor: html }));
  }

  return router;
}

/** An htmx request, not a history restore (which wants the whole page). */
function isHtmx(req: Request): boolean {
  return req.get('HX-Request') === 'true' && req.get('HX-History-Restore-Request') !== 'true';
}

function sendHtml(req: Request, res: Response, status: number, fragment: string, wholePage: () => string): void {
  res
    .status(status)
    .type('text/html; charset=utf-8')
    .send(isHtmx(req) ? fragment : wholePage());
}

function parseOffset(value: unknown): number {
  return typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : 0;
}
