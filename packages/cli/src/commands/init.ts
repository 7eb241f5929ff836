import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';

/**
 * `ack init [DIR]`: lays out a new application home (docs/architecture.md) that `ack serve --app-dir DIR/app`
 * serves at once. Refuses a folder that already has files, so nothing of a user's is overwritten.
 */
export function initHome(dir: string): string[] {
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
        FileSyncTokens: [],
        ModuleLogFilePath: '../log/wwwroot.log',
      },
    }),
    'modules/wwwroot/wwwroot/index.html':
      '<!doctype html>\n<html><head><meta charset="utf-8"><title>ack</title></head>\n<body><h1>ack is running</h1><p>Put static files in modules/wwwroot/wwwroot and screens in contracts/wwwroot/HDS.</p></body></html>\n',
    'contracts/wwwroot/HDS/index.html':
      '<!doctype html>\n<html><head><meta charset="utf-8"><title>HDS</title></head>\n<body><h1>Contract screens of HDS</h1></body></html>\n',
    'config/shared_files.json': json({ items: [] }),
    'log/.keep': '',
  };
  const written: string[] = [];
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(home, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content, { flag: 'wx' });
    written.push(relative);
  }
  return written;
}

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
        const written = initHome(dir);
        const home = path.resolve(dir);
        process.stdout.write(`created ${written.length} files in ${home}\nnext: ack serve --app-dir ${path.join(home, 'app')}\n`);
      } catch (err) {
        process.stderr.write(`ack: ${(err as Error).message}\n`);
        process.exit(err instanceof InitError ? EXIT.usage : EXIT.failed);
      }
    });
}
