/**
 * `returnUrl` after sign-in is followed only when it is a path on this host (docs/dev-sign-in.md "returnUrl"): it must
 * start with one `/`, and neither it nor any percent-decoded form of it may start with `//` or
 * `/\` (which browsers read as another host), hold a backslash or a control character, or
 * resolve to another origin. Anything else, or nothing, gives `/`.
 */
export function safeLocalReturnUrl(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > 2048) return '/';
  let current = value;
  // Decode until stable (bounded): `%252F%252F` must be judged as `//` too.
  for (let round = 0; round < 4; round++) {
    if (!isLocalPathForm(current)) return '/';
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return '/';
    }
    if (decoded === current) break;
    current = decoded;
    if (round === 3) return '/';
  }
  const probe = 'http://return-url.invalid';
  try {
    if (new URL(value, probe).origin !== probe) return '/';
  } catch {
    return '/';
  }
  return value;
}

function isLocalPathForm(text: string): boolean {
  if (!text.startsWith('/')) return false;
  if (text.startsWith('//')) return false;
  if (text.includes('\\')) return false;
  // C0 controls, DEL and C1 controls: browsers strip tabs and newlines, turning `/\t/evil` into `//evil`.
  return !/[\u0000-\u001f\u007f-\u009f]/.test(text);
}
