import { describe, expect, it } from 'vitest';
import { kindOf, textAssetId, textAssetType } from './rules.js';

describe('text asset ID (rule 1 of docs/loader.md)', () => {
  it('is the file name without its last extension', () => {
    expect(textAssetId('/shared/settings.json')).toBe('settings');
    expect(textAssetId('/notice.html')).toBe('notice');
    expect(textAssetId('/a/b/c/terms.txt')).toBe('terms');
  });

  it('removes only the last extension and replaces every other character outside [A-Za-z0-9_] by _', () => {
    expect(textAssetId('/shared/app.config.json')).toBe('app_config');
    expect(textAssetId('/shared/my-file name+v2.md')).toBe('my_file_name_v2');
    expect(textAssetId('/shared/Data_2024.csv')).toBe('Data_2024');
    expect(textAssetId('/shared/über.txt')).toBe('_ber');
  });

  it('decodes a percent-encoded file name first, and keeps a malformed one as written', () => {
    expect(textAssetId('/shared/my%20notes.md')).toBe('my_notes');
    expect(textAssetId('/shared/bad%zz.txt')).toBe('bad_zz');
  });

  it('keeps a name without extension whole, and gives no ID when nothing precedes the extension', () => {
    expect(textAssetId('/shared/LICENSE')).toBe('LICENSE');
    expect(textAssetId('/shared/.env')).toBe('');
    expect(textAssetId('/shared/')).toBe('');
    expect(textAssetId('/shared/.env', 'shared_')).toBe('');
  });

  it('puts the optional prefix in front (shared_ for screens written for the original)', () => {
    expect(textAssetId('/shared/settings.json', 'shared_')).toBe('shared_settings');
    expect(textAssetId('/shared/notice.html', 'x-')).toBe('x_notice');
  });

  it('gives one ID to names that differ only in extension or in replaced characters (rule 3)', () => {
    expect(textAssetId('/a/settings.json')).toBe(textAssetId('/b/settings.txt'));
    expect(textAssetId('/a/my-file.md')).toBe(textAssetId('/a/my.file.md'));
  });
});

describe('extension table (docs/loader.md)', () => {
  it('sends .css to the style list and .js to the script list', () => {
    expect(kindOf('/shared/theme.css')).toBe('style');
    expect(kindOf('/shared/app-init.js')).toBe('script');
    expect(kindOf('/shared/min.bundle.js')).toBe('script');
  });

  it('compares case-sensitively (rule 2): .CSS and .JS are text assets', () => {
    expect(kindOf('/shared/THEME.CSS')).toBe('text');
    expect(kindOf('/shared/App.Js')).toBe('text');
    expect(textAssetType('/shared/THEME.CSS')).toBe('text/plain');
  });

  it('makes every other file a text asset', () => {
    for (const p of ['/x.html', '/x.json', '/x.mjs', '/x.css.map', '/x', '/css', '/js.txt'])
      expect(kindOf(p)).toBe('text');
  });

  it('types text assets by the table, text/plain otherwise', () => {
    const table: Array<[string, string]> = [
      ['/s/a.html', 'text/html'],
      ['/s/a.htm', 'text/html'],
      ['/s/a.json', 'application/json'],
      ['/s/a.xml', 'application/xml'],
      ['/s/a.md', 'text/markdown'],
      ['/s/a.txt', 'text/plain'],
      ['/s/a.csv', 'text/csv'],
      ['/s/a.yaml', 'text/plain'],
      ['/s/a', 'text/plain'],
      ['/s/a.JSON', 'text/plain'],
      ['/s/a.constructor', 'text/plain'],
      ['/s.json/a', 'text/plain'],
    ];
    for (const [p, type] of table) expect([p, textAssetType(p)]).toEqual([p, type]);
  });
});
