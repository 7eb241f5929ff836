import fs from 'node:fs';
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

// Reads a settings JSON file as .NET's JSON configuration provider does: a UTF-8 BOM, `//` and
// `/* */` comments and trailing commas are accepted (appsettings.json files written for the
// original host often carry comments); a key given twice in one object (ignoring case) is an error.
// Problems come back with line and column, and any value can be located in the file afterwards.

export interface JsonFile {
  value: unknown;
  /** `line:column` (1-based) of the value at `path` (keys matched ignoring case), if it is in the file. */
  locate(path: readonly (string | number)[]): string | undefined;
}

export class JsonFileError extends Error {}

const PROBLEMS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: 'expected ":"',
  CommaExpected: 'expected "," between entries',
  CloseBraceExpected: 'expected "}"',
  CloseBracketExpected: 'expected "]"',
  EndOfFileExpected: 'unexpected text after the end of the JSON value',
  InvalidCommentToken: 'invalid comment',
  UnexpectedEndOfComment: 'comment not closed',
  UnexpectedEndOfString: 'string not closed',
  UnexpectedEndOfNumber: 'number not complete',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character in a string',
};

export function readJsonFile(file: string): JsonFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new JsonFileError(`${file}: file not found`);
    if (code === 'EISDIR') throw new JsonFileError(`${file}: is a folder, not a file`);
    throw new JsonFileError(`${file}: cannot be read (${code ?? (err as Error).message})`);
  }
  return parseJsonText(text, file);
}

export function parseJsonText(rawText: string, file: string): JsonFile {
  const text = rawText.replace(/^\uFEFF/, '');
  const position = lineColumn(text);
  if (text.trim() === '') throw new JsonFileError(`${file}: the file is empty (expected a JSON object)`);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first || !tree) {
    const what = first
      ? (PROBLEMS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error))
      : 'no JSON value';
    throw new JsonFileError(`${file}:${position(first?.offset ?? 0)}: not valid JSON: ${what}`);
  }
  const value = toValue(tree, file, position);
  return {
    value,
    locate(path) {
      let node: Node | undefined = tree;
      for (const seg of path) {
        if (!node) return undefined;
        if (node.type === 'array' && typeof seg === 'number') node = node.children?.[seg];
        else if (node.type === 'object') {
          const key = String(seg).toLowerCase();
          // The last of duplicate-insensitive keys is the one in effect; duplicates are errors anyway.
          node = node.children?.filter((p) => String(p.children?.[0]?.value).toLowerCase() === key).pop()
            ?.children?.[1];
        } else return undefined;
      }
      return node ? position(node.offset) : undefined;
    },
  };
}

function toValue(node: Node, file: string, position: (offset: number) => string): unknown {
  switch (node.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const seen = new Map<string, string>();
      for (const prop of node.children ?? []) {
        const [keyNode, valueNode] = prop.children ?? [];
        if (!keyNode || !valueNode) continue;
        const key = String(keyNode.value);
        const earlier = seen.get(key.toLowerCase());
        if (earlier !== undefined) {
          throw new JsonFileError(
            `${file}:${position(keyNode.offset)}: the key "${key}" appears twice in one object (keys ignore case; first as "${earlier}")`,
          );
        }
        seen.set(key.toLowerCase(), key);
        out[key] = toValue(valueNode, file, position);
      }
      return out;
    }
    case 'array':
      return (node.children ?? []).map((c) => toValue(c, file, position));
    default:
      return node.value as unknown;
  }
}

/** Maps an offset to `line:column`, both 1-based. */
function lineColumn(text: string): (offset: number) => string {
  let starts: number[] | undefined;
  return (offset) => {
    if (!starts) {
      starts = [0];
      for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return `${lo + 1}:${offset - starts[lo]! + 1}`;
  };
}
