import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from './catalog.js';

const resolve = (p: string) => path.resolve('/home/app', p);

describe('buildCatalog (the catalog rules)', () => {
  it('keeps catalog order, skips empty fields, lets the first duplicate win, resolves from the entry base path', () => {
    const { catalog, notes } = buildCatalog(
      [
        { requestPath: '/b.css', hostFilePath: '../shared/b.css' },
        { requestPath: '  ', hostFilePath: 'x' },
        { requestPath: '/a.js', hostFilePath: '' },
        { requestPath: '/A.CSS', hostFilePath: '/abs/a.css' },
        { requestPath: '/a.css', hostFilePath: '../other.css' },
        { hostFilePath: 'x' },
        null,
      ],
      resolve,
    );
    expect(catalog.items).toEqual([
      { requestPath: '/b.css', hostFilePath: '/home/shared/b.css' },
      { requestPath: '/A.CSS', hostFilePath: '/abs/a.css' },
    ]);
    expect(catalog.byPath.get('/a.css')).toBe('/abs/a.css');
    expect(notes).toHaveLength(5);
  });
});
