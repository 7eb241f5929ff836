// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// request headers, read strictly, since they come from any client (docs/operations.md "Traces").
// A header that is not valid is as if it were absent: the request starts a new trace, and nothing
// of what was sent is passed on. Never an error answer.

/** The caller's place in a trace, from a valid `traceparent`. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** The caller's span: 16 lowercase hex digits, not all zero. */
  parentId: string;
  /** The `sampled` flag: the caller records this trace. */
  sampled: boolean;
}

// version "-" trace-id "-" parent-id "-" trace-flags, each in lowercase hex; a later version may
// add fields after one more "-".
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^]*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * Reads `traceparent`. Version 00 is exactly 55 characters. A later version (not `ff`, which is
 * invalid) is read as the spec asks: its first four fields as version 00 has them, anything after
 * them only if it starts with "-", and of its flags only `sampled`; it is passed on as version 00.
 * Two headers (an array, or values Node joined with ", ") are invalid.
 */
export function parseTraceparent(value: string | string[] | undefined): TraceParent | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m) return undefined;
  const [, version, traceId, parentId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || parentId === ZERO_SPAN_ID) return undefined;
  return { traceId: traceId!, parentId: parentId!, sampled: (parseInt(flags!, 16) & 1) === 1 };
}

/** The `traceparent` this host sends: always version 00, with only the `sampled` flag. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

// A list member is key=value. A key is a simple key or tenant@system (multi-tenant); a value is
// printable ASCII without "," and "=", ending in a non-space, at most 256 characters.
const MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
/** At most this many list members. */
export const MAX_TRACESTATE_MEMBERS = 32;
/** Passed on at most this long; longer lists are cut as the spec says (large members first). */
export const MAX_TRACESTATE_LENGTH = 512;
const LARGE_MEMBER = 128;

/**
 * Reads `tracestate` (only worth reading beside a valid `traceparent`): the list as it will be
 * passed on, members joined by ",", or undefined when there is none or it is not valid (a bad
 * member, a key twice, more than 32 members). Several headers are one list, in order.
 */
export function parseTracestate(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : value.join(',');
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of text.split(',')) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue; // empty members are allowed, and dropped
    if (!MEMBER.test(member)) return undefined;
    const key = member.slice(0, member.indexOf('='));
    if (keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
    if (members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  }
  const list = truncateTracestate(members);
  return list === '' ? undefined : list;
}

/**
 * Over 512 characters, members longer than 128 are dropped first, from the end, then members
 * from the end, until the list fits (the order a vendor may cut it in).
 */
function truncateTracestate(members: string[]): string {
  const length = () => members.reduce((n, m) => n + m.length, 0) + members.length - 1;
  for (let i = members.length - 1; i >= 0 && length() > MAX_TRACESTATE_LENGTH; i--) {
    if (members[i]!.length > LARGE_MEMBER) members.splice(i, 1);
  }
  while (members.length > 0 && length() > MAX_TRACESTATE_LENGTH) members.pop();
  return members.join(',');
}
