/**
 * One cookie's value from a `Cookie` header, read exactly as cookie-parser (the `cookie` package's
 * `parse`) reads it: pairs split at `;`, the first pair of a name wins, spaces and tabs around the
 * name and value dropped, one pair of surrounding double quotes removed, the value percent-decoded
 * when it holds `%` and decodes (else kept as sent). Only that one value is cut out and decoded:
 * the sign-in phase reads the authentication cookie on every request, and the others (the large
 * `{P}.Member`, `{P}.Variable`, `{P}.BearerToken`) are decoded only if a module asks for
 * `req.cookies` (docs/benchmarks.md "Where a signed-in request's time goes").
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (typeof header !== 'string') return undefined;
  const len = header.length;
  if (len < 2) return undefined;
  let index = 0;
  do {
    const eqIdx = header.indexOf('=', index);
    if (eqIdx === -1) break;
    let endIdx = header.indexOf(';', index);
    if (endIdx === -1) {
      endIdx = len;
    } else if (eqIdx > endIdx) {
      // A pair without `=`: go on from the last `;` before the next `=`.
      index = header.lastIndexOf(';', eqIdx - 1) + 1;
      continue;
    }
    const keyStart = startIndex(header, index, eqIdx);
    const keyEnd = endIndex(header, eqIdx, keyStart);
    if (keyEnd - keyStart === name.length && header.startsWith(name, keyStart)) {
      let valStart = startIndex(header, eqIdx + 1, endIdx);
      let valEnd = endIndex(header, endIdx, valStart);
      if (header.charCodeAt(valStart) === 0x22 && header.charCodeAt(valEnd - 1) === 0x22) {
        valStart++;
        valEnd--;
      }
      const value = header.slice(valStart, valEnd);
      if (value.indexOf('%') === -1) return value;
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
    index = endIdx + 1;
  } while (index < len);
  return undefined;
}

/**
 * A `Cookie` header holding cookie `name` alone, read by cookie-parser as it reads that cookie in
 * `header` (what express-session is shown, session/create-session.ts).
 */
export function ownCookieHeader(header: string, name: string): string {
  const value = cookieValue(header, name);
  return value === undefined ? '' : `${name}=${encodeURIComponent(value)}`;
}

function startIndex(s: string, index: number, max: number): number {
  do {
    const code = s.charCodeAt(index);
    if (code !== 0x20 && code !== 0x09) return index;
  } while (++index < max);
  return max;
}

function endIndex(s: string, index: number, min: number): number {
  while (index > min) {
    const code = s.charCodeAt(--index);
    if (code !== 0x20 && code !== 0x09) return index + 1;
  }
  return min;
}
