/**
 * The pure core of the loader (docs/loader.md): which list a manifest entry joins, the type of a text
 * asset, and its ID. No DOM, no network, so it is unit-tested in Node.
 */

/** How a shared file joins screen start-up. */
export type SharedFileKind = 'style' | 'script' | 'text';

/** Text asset types by extension (the table in docs/loader.md); any other extension is `text/plain`. */
const TEXT_TYPES = new Map([
  ['html', 'text/html'],
  ['htm', 'text/html'],
  ['json', 'application/json'],
  ['xml', 'application/xml'],
  ['md', 'text/markdown'],
  ['txt', 'text/plain'],
  ['csv', 'text/csv'],
]);

/** The last path segment, percent-decoded when it is valid percent-encoding. */
export function fileNameOf(requestPath: string): string {
  const name = requestPath.slice(requestPath.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** Extension without the dot, exactly as written (rule 2: the comparison is case-sensitive). */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1);
}

/** `.css` joins the style list, `.js` the script list; everything else (`.CSS` too) is a text asset. */
export function kindOf(requestPath: string): SharedFileKind {
  const ext = extensionOf(fileNameOf(requestPath));
  return ext === 'css' ? 'style' : ext === 'js' ? 'script' : 'text';
}

/** The `type` of a text asset: the table in docs/loader.md, `text/plain` otherwise. Case-sensitive, as rule 2. */
export function textAssetType(requestPath: string): string {
  return TEXT_TYPES.get(extensionOf(fileNameOf(requestPath))) ?? 'text/plain';
}

/**
 * Rule 1: the file name without its last extension, every character other than `A-Z a-z 0-9 _`
 * replaced by `_`, after the optional prefix (`shared_` for screens written for the original).
 * Empty when the name has nothing before its extension (`.env`): such a file gets no asset.
 */
export function textAssetId(requestPath: string, prefix = ''): string {
  const name = fileNameOf(requestPath);
  const dot = name.lastIndexOf('.');
  const base = dot < 0 ? name : name.slice(0, dot);
  return base ? (prefix + base).replace(/[^A-Za-z0-9_]/g, '_') : '';
}
