import type { Contact, ContactErrors, ContactFields } from './contacts-store.js';

/**
 * HTML of the htmx sample. Every value that came from a user goes through `escapeHtml`, in text
 * and in attributes alike; the templates below interpolate nothing else unescaped except other
 * rendered fragments and numbers.
 */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const BASE = '/wwwroot/api/htmx';
export const PAGE_SIZE = 10;

export function contactRow(c: Contact): string {
  return `<tr id="contact-${c.id}">
  <td><a href="${BASE}/contacts/${c.id}" hx-get="${BASE}/contacts/${c.id}" hx-target="#editor">${escapeHtml(c.name)}</a></td>
  <td>${escapeHtml(c.email)}</td>
  <td class="actions">
    <button type="button" hx-get="${BASE}/contacts/${c.id}/quick" hx-target="#quick-view">Quick view</button>
    <button type="button" hx-get="${BASE}/contacts/${c.id}/edit" hx-target="#editor">Edit</button>
    <button type="button" hx-delete="${BASE}/contacts/${c.id}" hx-target="closest tr" hx-swap="outerHTML" hx-confirm="Delete ${escapeHtml(c.name)}?">Delete</button>
  </td>
</tr>`;
}

/** Rows from `offset`, then the "load more" row when more remain. */
export function contactRows(contacts: Contact[], offset: number, total: number): string {
  const next = offset + contacts.length;
  const more =
    next < total
      ? `<tr id="load-more"><td colspan="3"><button type="button" hx-get="${BASE}/contacts/more?offset=${next}" hx-target="#load-more" hx-swap="outerHTML">Load more (${total - next} left)</button> <a href="${BASE}/contacts?offset=${next}">next page</a></td></tr>`
      : '';
  return contacts.map(contactRow).join('\n') + more;
}

export function contactTable(contacts: Contact[], offset: number, total: number): string {
  return `<p class="summary">${total} contact${total === 1 ? '' : 's'}</p>
<table id="contacts-table">
  <thead><tr><th>Name</th><th>E-mail</th><th></th></tr></thead>
  <tbody id="contact-rows">
${contactRows(contacts, offset, total)}
  </tbody>
</table>`;
}

export function contactDetails(c: Contact): string {
  return `<article id="contact-details" data-contact-id="${c.id}">
  <h2>${escapeHtml(c.name)}</h2>
  <dl>
    <dt>E-mail</dt><dd class="email">${escapeHtml(c.email)}</dd>
    <dt>Phone</dt><dd class="phone">${escapeHtml(c.phone || '—')}</dd>
  </dl>
  <button type="button" hx-get="${BASE}/contacts/${c.id}/edit" hx-target="#editor">Edit</button>
</article>`;
}

export function contactQuickView(c: Contact): string {
  return `<aside class="quick" data-contact-id="${c.id}"><strong>${escapeHtml(c.name)}</strong> · ${escapeHtml(c.email)}${c.phone ? ` · ${escapeHtml(c.phone)}` : ''}</aside>`;
}

/** The create form (no contact) or the edit form; htmx sends POST or PUT, a plain browser POSTs. */
export function contactForm(fields: ContactFields, errors: ContactErrors, contactId?: number): string {
  const action = contactId === undefined ? `${BASE}/contacts` : `${BASE}/contacts/${contactId}`;
  const verb = contactId === undefined ? `hx-post="${action}"` : `hx-put="${action}"`;
  const field = (name: keyof ContactFields, label: string, type: string) => {
    const error = errors[name];
    return `<label>${label}
    <input name="${name}" type="${type}" value="${escapeHtml(fields[name])}"${error ? ' aria-invalid="true"' : ''}>
    ${error ? `<span class="error" data-field="${name}">${escapeHtml(error)}</span>` : ''}
  </label>`;
  };
  return `<form id="contact-form" method="post" action="${action}" ${verb} hx-target="#editor" novalidate>
  <h2>${contactId === undefined ? 'New contact' : 'Edit contact'}</h2>
  ${errors.form ? `<p class="error">${escapeHtml(errors.form)}</p>` : ''}
  ${field('name', 'Name', 'text')}
  ${field('email', 'E-mail', 'email')}
  ${field('phone', 'Phone', 'tel')}
  <button type="submit">${contactId === undefined ? 'Create' : 'Save'}</button>
</form>`;
}

/** An out-of-band update of the message line (htmx swaps it by id, after the main swap). */
export function messageOob(text: string): string {
  return `<div id="messages" role="status" hx-swap-oob="true">${escapeHtml(text)}</div>`;
}

export function notFound(id: string): string {
  return `<p class="error" id="not-found">There is no contact ${escapeHtml(id)}.</p>`;
}

/** The sample's styles, served at `${BASE}/contacts.css` for the module's page and the example screen. */
/** The sample's look: the palette of the example screens (examples/basic/shared/theme.css). */
export const STYLESHEET = `:root{--accent:#0b6e4f;--surface:#eef5f1;--text:#1d2b25}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;line-height:1.5;margin:0 auto;padding:1.5rem;max-width:60rem;background:var(--surface);color:var(--text)}
h1{color:var(--accent);border-bottom:3px solid var(--accent);padding-bottom:.25rem}
.ack-bar{display:flex;align-items:center;gap:1.25rem;margin:-1.5rem -1.5rem 1.5rem;padding:.6rem 1.5rem;background:var(--accent);color:#fff}
.ack-bar a{color:#fff;text-decoration:none;opacity:.85}.ack-bar a[aria-current=page]{opacity:1;text-decoration:underline}.ack-bar strong{margin-right:auto}
main{display:grid;grid-template-columns:2fr 1fr;gap:1rem;align-items:start}main>section{background:#fff;border-left:4px solid var(--accent);border-radius:6px;padding:.75rem 1rem;box-shadow:0 1px 3px rgb(0 0 0/12%)}
table{border-collapse:collapse;width:100%}td,th{padding:.35rem .5rem;border-bottom:1px solid #d8e4dd;text-align:left}th{color:var(--accent)}
button{padding:.3rem .7rem;border:1px solid var(--accent);border-radius:4px;background:#fff;color:var(--accent);font:inherit;cursor:pointer}
#new-contact,form button[type=submit]{background:var(--accent);color:#fff}
label{display:block;margin:.5rem 0}input{width:100%;box-sizing:border-box;padding:.3rem .5rem;border:1px solid #b8ccc1;border-radius:4px;font:inherit}
a{color:var(--accent)}.error{color:#b00020}#messages{min-height:1.5rem;color:var(--accent)}.summary{color:#5b6b63}
`;

/** The whole page: what a browser gets without htmx (first load, reload of a pushed URL, no script). */
export function page(parts: { list: string; editor?: string; quick?: string; message?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Contacts · htmx sample</title>
<script src="${BASE}/htmx.min.js"></script>
<link rel="stylesheet" href="${BASE}/contacts.css">
</head>
<body>
<h1>Contacts</h1>
<div id="messages" role="status">${parts.message ? escapeHtml(parts.message) : ''}</div>
<main>
  <section>
    <button type="button" id="new-contact" hx-get="${BASE}/contacts/new" hx-target="#editor">New contact</button>
    <div id="contact-list" hx-get="${BASE}/contacts" hx-trigger="contacts-changed from:body">
${parts.list}
    </div>
  </section>
  <section>
    <div id="quick-view">${parts.quick ?? ''}</div>
    <div id="editor">${parts.editor ?? ''}</div>
  </section>
</main>
</body>
</html>`;
}
