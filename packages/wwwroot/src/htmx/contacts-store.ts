/**
 * The htmx sample's data: an in-memory contact list (per host process, bounded), seeded with a
 * few entries so that paging and "load more" have something to show. Pure: no HTTP here.
 */
export interface Contact {
  id: number;
  name: string;
  email: string;
  phone: string;
}

export type ContactFields = Omit<Contact, 'id'>;
export type ContactErrors = Partial<Record<keyof ContactFields | 'form', string>>;

export const MAX_CONTACTS = 500;
const SEED_NAMES = [
  'Ada Lovelace',
  'Alan Turing',
  'Grace Hopper',
  'Edsger Dijkstra',
  'Barbara Liskov',
  'Donald Knuth',
  'Margaret Hamilton',
  'Ken Thompson',
  'Dennis Ritchie',
  'Frances Allen',
  'John Backus',
  'Radia Perlman',
  'Tim Berners-Lee',
  'Adele Goldberg',
  'Niklaus Wirth',
  'Hedy Lamarr',
  'Leslie Lamport',
  'Shafi Goldwasser',
  'Tony Hoare',
  'Sophie Wilson',
  'Bjarne Stroustrup',
  'Karen Spärck Jones',
  'Guido van Rossum',
  'Jean Sammet',
];

export function createContactStore(seed = true) {
  const contacts = new Map<number, Contact>();
  let nextId = 1;
  if (seed) {
    for (const name of SEED_NAMES) {
      const id = nextId++;
      const email = `${name
        .toLowerCase()
        .normalize('NFD')
        .replace(/[^a-z ]/g, '')
        .replace(/ +/g, '.')}@example.com`;
      contacts.set(id, { id, name, email, phone: `+1 555 01${String(id).padStart(2, '0')}` });
    }
  }
  return {
    count: () => contacts.size,
    /** Newest first (a new contact shows at the top), `limit` of them from `offset`. */
    page(offset: number, limit: number): Contact[] {
      return [...contacts.values()].reverse().slice(offset, offset + limit);
    },
    get: (id: number) => contacts.get(id),
    create(fields: ContactFields): Contact | undefined {
      if (contacts.size >= MAX_CONTACTS) return undefined;
      const contact = { id: nextId++, ...fields };
      contacts.set(contact.id, contact);
      return contact;
    },
    update(id: number, fields: ContactFields): Contact | undefined {
      if (!contacts.has(id)) return undefined;
      const contact = { id, ...fields };
      contacts.set(id, contact);
      return contact;
    },
    delete: (id: number) => contacts.delete(id),
  };
}

export type ContactStore = ReturnType<typeof createContactStore>;

/** Reads and checks the form fields; values are trimmed, errors say what to fix. */
export function checkContact(body: unknown): { fields: ContactFields; errors: ContactErrors } {
  const o = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const text = (name: string) => (typeof o[name] === 'string' ? (o[name] as string).trim() : '');
  const fields: ContactFields = { name: text('name'), email: text('email'), phone: text('phone') };
  const errors: ContactErrors = {};
  if (fields.name === '') errors.name = 'Enter a name.';
  else if (fields.name.length > 100) errors.name = 'Use at most 100 characters.';
  if (fields.email === '') errors.email = 'Enter an e-mail address.';
  else if (fields.email.length > 254 || !/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(fields.email))
    errors.email = 'Enter an e-mail address such as name@example.com.';
  if (fields.phone.length > 40 || !/^[0-9+()\-. ]*$/.test(fields.phone))
    errors.phone = 'Use digits, spaces and + ( ) - . only, at most 40.';
  return { fields, errors };
}

/** A contact id from the URL: a positive whole number, else undefined. */
export function parseContactId(text: string): number | undefined {
  return /^[1-9]\d{0,8}$/.test(text) ? Number(text) : undefined;
}
