/**
 * Response heads worked out once (docs/pipeline.md "Response heads"). Pure: no I/O, no Node objects.
 *
 * Node validates and stores every `setHeader` call on its own; a head given to `writeHead` as one
 * flat `[name, value, ...]` list costs a fraction of that. So the headers that do not depend on the
 * request are joined once into such a list: the edge's (security headers, `Vary: Origin`) with a
 * responder's own (a file version's 200 or 304, the 404 page, the manifest).
 */
export type HeaderPairs = ReadonlyArray<readonly [string, string]>;

/** A head as HTTP/2's stream API takes it: lower-case names, the status as `:status`. */
export type HeaderFields = Readonly<Record<string, string | number | string[]>>;

/** Joins remembered per object: a few variants are expected; past this, joins are made each time. */
const MAX_REMEMBERED_JOINS = 16;

/**
 * What a 304 carries of the headers a 200 would (RFC 9110 15.4.5): a cache that revalidates keeps
 * its stored response and replaces only the headers the 304 sends (RFC 9111 4.3.4), so the
 * stored 200's security headers stay in force (docs/pipeline.md "Response heads").
 */
const NOT_MODIFIED_FIELDS = new Set(['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary']);

/** Whether a 304 carries this header (RFC 9110 15.4.5). */
export function carriedByNotModified(name: string): boolean {
  return NOT_MODIFIED_FIELDS.has(name.toLowerCase());
}

/**
 * Headers the edge owes a response (security headers, CORS's `Vary: Origin`). Edge handlers add
 * constant lists made at start, so the few variants that occur (scheme, Origin or not) are each
 * one object, and a prepared head remembers its join with each by identity.
 */
export class EdgeHeaders {
  static readonly NONE = new EdgeHeaders([]);
  private readonly extended = new Map<HeaderPairs, EdgeHeaders>();
  private notModifiedPart: EdgeHeaders | undefined;

  private constructor(readonly pairs: HeaderPairs) {}

  /** The part of these headers a 304 carries (`Vary`); one object per variant, made on first use. */
  get notModified(): EdgeHeaders {
    return (this.notModifiedPart ??= new EdgeHeaders(this.pairs.filter(([name]) => carriedByNotModified(name))));
  }

  /** The headers owed to a response of this status: the 304's part for a 304, else all. */
  forStatus(status: number): EdgeHeaders {
    return status === 304 ? this.notModified : this;
  }

  /** These headers and then `more` (a constant list; `Vary` values merged). */
  plus(more: HeaderPairs): EdgeHeaders {
    let next = this.extended.get(more);
    if (next === undefined) {
      next = new EdgeHeaders(joinHeaders(this.pairs, more));
      if (this.extended.size < MAX_REMEMBERED_JOINS) this.extended.set(more, next);
    }
    return next;
  }
}

/** A responder's own head, joined with each edge variant on first use (a handful per head). */
export class PreparedHead {
  // Flat lists are handed to Node's `writeHead` as they are and never changed.
  private readonly joined = new Map<EdgeHeaders, string[]>();
  // One status per head in practice (a 200's, a 304's): the fields of the last status asked for.
  private readonly fields = new Map<EdgeHeaders | undefined, { status: number; fields: HeaderFields }>();
  /** The head alone, flat: for a response the edge owes nothing. */
  readonly flat: string[];

  constructor(readonly pairs: HeaderPairs) {
    this.flat = pairs.flat();
  }

  /** `[name, value, ...]`: the edge's headers, then this head's; a name in both keeps this head's value. */
  flatWith(edge: EdgeHeaders | undefined): string[] {
    if (edge === undefined) return this.flat;
    let flat = this.joined.get(edge);
    if (flat === undefined) {
      flat = joinHeaders(edge.pairs, this.pairs).flat();
      if (this.joined.size < MAX_REMEMBERED_JOINS) this.joined.set(edge, flat);
    }
    return flat;
  }

  /** The same head as one HTTP/2 header object with `:status` (never changed once made). */
  fieldsWith(edge: EdgeHeaders | undefined, status: number): HeaderFields {
    const known = this.fields.get(edge);
    if (known !== undefined && known.status === status) return known.fields;
    const flat = this.flatWith(edge);
    const fields: Record<string, string | number | string[]> = { ':status': status };
    for (let i = 0; i < flat.length; i += 2) {
      const name = flat[i]!.toLowerCase();
      const prior = fields[name];
      fields[name] = prior === undefined ? flat[i + 1]! : [...[prior].flat().map(String), flat[i + 1]!];
    }
    if (known !== undefined || this.fields.size < MAX_REMEMBERED_JOINS) this.fields.set(edge, { status, fields });
    return fields;
  }
}

/**
 * `first` then `second`, names compared case-insensitively: `Vary` lists are merged (each token
 * once, `first`'s first); for any other name in both, `second`'s value replaces `first`'s.
 */
export function joinHeaders(first: HeaderPairs, second: HeaderPairs): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [...first];
  for (const [name, value] of second) {
    const at = out.findIndex(([n]) => n.toLowerCase() === name.toLowerCase());
    if (at === -1) out.push([name, value]);
    else if (name.toLowerCase() === 'vary') out[at] = [out[at]![0], mergeVary(out[at]![1], value)];
    else out[at] = [out[at]![0], value];
  }
  return out;
}

/** Two `Vary` values as one, each field name once (case-insensitive), in order; `*` absorbs all. */
export function mergeVary(first: string, second: string): string {
  const names: string[] = [];
  for (const token of `${first},${second}`.split(',')) {
    const name = token.trim();
    if (name === '') continue;
    if (name === '*') return '*';
    if (!names.some((n) => n.toLowerCase() === name.toLowerCase())) names.push(name);
  }
  return names.join(', ');
}
