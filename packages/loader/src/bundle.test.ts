import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bundle } from '../build.mjs';

describe('bundle', () => {
  it('is under 3 KiB minified and gzipped, with no run-time imports', async () => {
    const { iife, esm } = await bundle();
    for (const { code } of [iife, esm]) {
      expect(gzipSync(code, { level: 9 }).length).toBeLessThan(3 * 1024);
      expect(code).not.toMatch(/\bimport\s*[({"']|\brequire\(/);
    }
    expect(iife.code).toMatch(/^"use strict";var AckLoader=/);
    expect(iife.code).toContain('//# sourceMappingURL=ack.loader.js.map');
    expect(esm.code).toContain('//# sourceMappingURL=ack.loader.mjs.map');
    expect(JSON.parse(iife.map).sources.some((s: string) => s.endsWith('src/loader.ts'))).toBe(true);
  });
});
