// Placeholder: the loader issue replaces this with the esbuild bundle build.
import fs from 'node:fs';
fs.mkdirSync(new URL('./dist/', import.meta.url), { recursive: true });
