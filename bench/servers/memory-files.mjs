// The benchmark's files in memory, by URL path, with the validators and head (lower-case names,
// as HTTP/2 sends them) a static server answers with: for the bare Node HTTP/2 peers.
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.txt': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
};

function entry(file) {
  const body = fs.readFileSync(file);
  const st = fs.statSync(file);
  const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs * 1000).toString(16)}"`;
  const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString();
  const head = {
    'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
    etag,
    'last-modified': lastModified,
    'cache-control': 'no-cache',
    'content-length': body.length,
  };
  return { body, etag, lastModified, head };
}

export function memoryFiles(layout) {
  const files = new Map();
  const walk = (dir, prefix) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) walk(p, `${prefix}/${d.name}`);
      else if (!/\.(br|gz)$/.test(d.name)) files.set(`${prefix}/${d.name}`, entry(p));
    }
  };
  walk(layout.www, '');
  files.set('/shared/theme.css', entry(layout.sharedFile));
  return files;
}
