// The files every server in the benchmark serves: written once per run under bench/.work.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export const TREE_DIRS = 50;
export const TREE_FILES_PER_DIR = 100;

// A few hundred words, so generated text compresses about as well as real scripts and styles.
const WORDS = `function const return export import default class extends await async yield this null
undefined true false if else for while switch case break continue new typeof instanceof delete
document window element querySelector addEventListener dataset classList style display flex grid
margin padding border color background font width height position absolute relative transform
transition opacity contract screen loader module request response header status fetch json body
value name items length index map filter reduce push slice splice keys entries assign freeze`.split(/\s+/);

function words(bytes, seed) {
  let s = (seed * 2654435761) % 2 ** 32;
  const out = [];
  let n = 0;
  while (n < bytes) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const w =
      WORDS[s % WORDS.length] + ((s >> 8) % 9 === 0 ? ';\n' : (s >> 8) % 5 === 0 ? '(' + (s % 997) + ') ' : ' ');
    out.push(w);
    n += w.length;
  }
  return Buffer.from(out.join('').slice(0, bytes));
}

const letters = (n, seed) => Buffer.from(Array.from({ length: n }, (_, i) => 97 + ((i * 7 + seed) % 26)));

/** The screen of the "screen with compression" cell: an HTML page and the assets it loads. */
export const SCREEN_ASSETS = [
  ['index.html', 6 * 1024],
  ['app.js', 120 * 1024],
  ['vendor.js', 80 * 1024],
  ['app.css', 32 * 1024],
  ['icons.svg', 12 * 1024],
];

export function prepareFiles(work, repo) {
  fs.rmSync(work, { recursive: true, force: true });
  const home = path.join(work, 'home');
  const www = path.join(home, 'www');
  const write = (rel, data) => {
    const p = path.join(home, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
    return p;
  };
  write('www/index.html', '<!doctype html><title>bench</title><h1>bench</h1>');
  write('www/1k.txt', letters(1024, 1));
  write('www/16k.txt', letters(16 * 1024, 2));
  write('www/Mixed/CaseFile.txt', letters(1024, 3));
  write('www/4m.bin', Buffer.alloc(4 * 1024 * 1024, 7));
  const tree = [];
  for (let d = 0; d < TREE_DIRS; d++) {
    for (let f = 0; f < TREE_FILES_PER_DIR; f++) {
      const rel = `tree/d${d}/f${f}.txt`;
      write(`www/${rel}`, letters(256 + ((d * 31 + f) % 768), d + f));
      tree.push(`/${rel}`);
    }
  }
  // The screen's assets with precompressed sidecars (what a build step writes), for every server.
  const screen = [];
  SCREEN_ASSETS.forEach(([name, size], i) => {
    const body = words(size, i + 11);
    write(`www/screen/${name}`, body);
    write(`www/screen/${name}.gz`, zlib.gzipSync(body, { level: 9 }));
    write(
      `www/screen/${name}.br`,
      zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
    screen.push(`/screen/${name}`);
  });
  const sharedFile = write('shared/theme.css', letters(1024, 4));
  const items = [
    { requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' },
    { requestPath: '/shared/app-init.js', hostFilePath: '../shared/app-init.js' },
    { requestPath: '/shared/settings.json', hostFilePath: '../shared/settings.json' },
    { requestPath: '/shared/notice.html', hostFilePath: '../shared/notice.html' },
    { requestPath: '/shared/readme.md', hostFilePath: '../shared/readme.md' },
    { requestPath: '/shared/terms.txt', hostFilePath: '../shared/terms.txt' },
  ];
  write('config/shared_files.json', JSON.stringify({ items }, null, 2));
  const manifestJson = JSON.stringify(items.map((i) => ({ requestPath: i.requestPath })));
  const manifestFile = write('manifest.json', manifestJson);
  // The example's settings (security headers, CORS, sessions on), without the file log sink.
  const example = JSON.parse(fs.readFileSync(path.join(repo, 'examples/basic/app/appsettings.json'), 'utf8'));
  example.AppSettings.LoadModules = ['wwwroot'];
  example.Serilog.WriteTo = [];
  write('app/appsettings.json', JSON.stringify(example, null, 2));
  write(
    'modules/wwwroot/module.json',
    JSON.stringify(
      {
        ModuleID: 'wwwroot',
        Name: 'wwwroot',
        Version: '1.0.0',
        ModuleConfig: {
          ContractRequestPath: 'view',
          ContractBasePath: '../contracts/wwwroot',
          WWWRootBasePath: '../www',
          SharedFileConfigPath: '../config/shared_files.json',
        },
      },
      null,
      2,
    ),
  );
  const layout = {
    home,
    www,
    app: path.join(home, 'app'),
    sharedFile,
    sharedDir: path.dirname(sharedFile),
    manifestJson,
    manifestFile,
    tree,
    screen,
  };
  fs.writeFileSync(path.join(work, 'layout.json'), JSON.stringify(layout));
  return { ...layout, layoutFile: path.join(work, 'layout.json') };
}
