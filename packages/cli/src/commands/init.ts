import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';

/**
 * `ack init [DIR]`: lays out a new application home (docs/architecture.md) that `ack serve DIR`
 * serves at once, end to end: a sample screen that uses the browser loader the wwwroot module
 * serves itself, two shared files the loader joins to it, and a random sync token in module.json
 * (printed once by the command, so `ack sync upload` works without editing a file). Refuses a
 * folder that already has files, so nothing of a user's is overwritten.
 */
export function initHome(
  dir: string,
  syncToken: string = crypto.randomBytes(24).toString('base64url'),
): { written: string[]; syncToken: string } {
  const home = path.resolve(dir);
  if (fs.existsSync(home) && fs.readdirSync(home).length > 0) {
    throw new InitError(`${home} is not empty; choose a new or empty folder`);
  }
  const files: Record<string, string> = {
    'app/appsettings.json': json({
      AppSettings: {
        SystemID: 'ACK',
        ApplicationID: 'HDS',
        HostName: 'HOSTNAME',
        RunningEnvironment: 'D',
        LoadModules: ['wwwroot'],
        ContractRequestPath: 'view',
        CookiePrefixName: 'ack',
        Security: { EnableSecurityHeaders: true, EnablePublicCorsPolicy: true, ExposeSecretValues: false },
        SessionState: { IsSession: true, SessionCookieName: 'ack.Session', CacheType: 'Memory' },
      },
      Serilog: {
        WriteTo: [
          {
            Name: 'Console',
            Args: { outputTemplate: '[{Timestamp:HH:mm:ss} {Level:u3}] {Module}: {Message:lj}{NewLine}{Exception}' },
          },
          {
            Name: 'File',
            Args: {
              path: '../log/app.log',
              outputTemplate: '[{Timestamp:yyyy-MM-dd HH:mm:ss} {Level:u3}] {Module}: {Message:lj}{NewLine}{Exception}',
              rollingInterval: 'Day',
            },
          },
        ],
      },
    }),
    'modules/wwwroot/module.json': json({
      ModuleID: 'wwwroot',
      Name: 'wwwroot',
      Version: '1.0.0',
      ModuleConfig: {
        ContractRequestPath: 'view',
        ContractBasePath: '../contracts/wwwroot',
        WWWRootBasePath: '../modules/wwwroot/wwwroot',
        SharedFileConfigPath: '../config/shared_files.json',
        FileSyncTokens: [syncToken],
        ModuleLogFilePath: '../log/wwwroot.log',
      },
    }),
    'modules/wwwroot/wwwroot/index.html': SAMPLE_SCREEN,
    'modules/wwwroot/wwwroot/app.js': SAMPLE_SCRIPT,
    'contracts/wwwroot/HDS/index.html':
      '<!doctype html>\n<html><head><meta charset="utf-8"><title>HDS</title>\n<script src="/wwwroot/api/loader/ack.loader.js" data-ack-autoload></script></head>\n<body><h1>Contract screens of HDS</h1><p>Push screens here with <code>ack sync upload FILE --module wwwroot --path HDS/...</code>; they are served under <code>/view/</code>.</p></body></html>\n',
    'config/shared_files.json': json({
      items: [
        { requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' },
        { requestPath: '/shared/app-settings.json', hostFilePath: '../shared/app-settings.json' },
      ],
    }),
    'shared/theme.css': SHARED_THEME,
    'shared/app-settings.json': json({ greeting: 'Hello from a shared file', company: 'Your company' }),
    'log/.keep': '',
  };
  const written: string[] = [];
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(home, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content, { flag: 'wx' });
    written.push(relative);
  }
  return { written, syncToken };
}

const SAMPLE_SCREEN = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>ack is running</title>
  <!-- The browser loader, served by the wwwroot module itself: it joins the shared files of
       config/shared_files.json (a style sheet and a settings file) to this screen. The shared
       theme is also linked here, so that the first frame is already styled; the loader does not
       link it twice (docs/loader.md). -->
  <link rel="stylesheet" href="/shared/theme.css">
  <script src="/wwwroot/api/loader/ack.loader.js" data-ack-autoload></script>
  <script src="/app.js" defer></script>
</head>
<body>
  <main class="card">
    <h1>ack is running</h1>
    <p id="greeting" data-state="loading">Joining shared files…</p>
    <p>Static files live in <code>modules/wwwroot/wwwroot/</code>, screens in
      <code>contracts/wwwroot/HDS/</code> (served under <code>/view/</code>), shared files in
      <code>config/shared_files.json</code>.</p>
    <ul id="joined"></ul>
  </main>
</body>
</html>
`;

const SAMPLE_SCRIPT = `// Runs once the loader has joined the shared files: reads the settings text asset by its id.
(function () {
  var greeting = document.getElementById('greeting');
  if (!window.AckLoader) {
    greeting.textContent = 'The loader did not load.';
    greeting.setAttribute('data-state', 'failed');
    return;
  }
  window.AckLoader.ready.then(function (result) {
    var asset = document.getElementById('app_settings');
    var settings = asset ? JSON.parse(asset.textContent) : {};
    greeting.textContent = (settings.greeting || 'No shared settings') + ' (' + (settings.company || '-') + ')';
    greeting.setAttribute('data-state', 'ready');
    var list = document.getElementById('joined');
    result.styles.concat(result.scripts, result.textAssets.map(function (a) { return a.url; })).forEach(function (url) {
      var li = document.createElement('li');
      li.textContent = 'joined ' + url;
      list.append(li);
    });
  });
})();
`;

const SHARED_THEME = `/* Joined to every screen that includes the loader (config/shared_files.json). */
:root { --accent: #0b6e4f; --surface: #eef5f1; --text: #1d2b25; }
body { margin: 0; padding: 2rem; background: var(--surface); color: var(--text); font: 16px/1.5 system-ui, sans-serif; }
.card { max-width: 44rem; margin: 0 auto; background: #fff; border-top: 4px solid var(--accent); border-radius: 8px; padding: 1.25rem 1.5rem; box-shadow: 0 1px 4px rgb(0 0 0 / 12%); }
h1 { margin-top: 0; color: var(--accent); }
code { background: var(--surface); padding: 0 0.25rem; border-radius: 3px; }
`;

export class InitError extends Error {}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .argument('[dir]', 'folder for the new application home', '.')
    .description('lay out a new application home that `ack serve --app-dir <dir>/app` serves')
    .action((dir: string) => {
      try {
        const { written, syncToken } = initHome(dir);
        const home = path.resolve(dir);
        process.stdout.write(
          [
            `created ${written.length} files in ${home}`,
            // The host compares the token as written (as the original host does), so it is kept in plain
            // text: say where, so that file is kept as private as the token (docs/sync.md "The commands").
            `sync token: ${syncToken}`,
            `  kept in plain text in ${path.join(home, 'modules', 'wwwroot', 'module.json')} (FileSyncTokens): keep that file private; ack sync reads the token from ACK_SYNC_TOKEN`,
            `next: ack serve --app-dir ${path.join(home, 'app')}`,
            `then open http://127.0.0.1:8421/ and push screens with ACK_SYNC_TOKEN=<token> ack sync upload FILE --module wwwroot --path HDS/FILE`,
          ].join('\n') + '\n',
        );
      } catch (err) {
        process.stderr.write(`ack: ${(err as Error).message}\n`);
        process.exit(err instanceof InitError ? EXIT.usage : EXIT.failed);
      }
    });
}
