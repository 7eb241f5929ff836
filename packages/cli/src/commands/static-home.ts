import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * `ack serve DIR` where DIR is a plain folder, not an application home: a throw-away home whose
 * only module is wwwroot with DIR as its static root (the `npx serve` habit; docs/static-files.md).
 * Nothing is written into DIR. The home is removed by `remove()`.
 */
export interface StaticHome {
  appDir: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

export function createStaticHome(folder: string): StaticHome {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-serve-'));
  const write = (relative: string, value: object) => {
    const file = path.join(home, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(value, null, 2));
  };
  write('app/appsettings.json', {
    AppSettings: { LoadModules: ['wwwroot'], IsEnabledDevAutoSignIn: false, SessionState: { IsSession: false } },
    Serilog: {
      // The wwwroot module's start-up lines speak of its home (contract screens, shared files, the
      // transaction wrapper's AuthorizationKey): in a throw-away home they name nothing the user
      // has. Its warnings still show.
      MinimumLevel: { Default: 'Information', Override: { wwwroot: 'Warning' } },
      WriteTo: [
        {
          Name: 'Console',
          Args: { outputTemplate: '[{Timestamp:HH:mm:ss} {Level:u3}] {Module}: {Message:lj}{NewLine}{Exception}' },
        },
      ],
    },
  });
  write('modules/wwwroot/module.json', {
    ModuleID: 'wwwroot',
    ModuleConfig: {
      WWWRootBasePath: folder,
      ContractBasePath: path.join(home, 'contracts', 'wwwroot'),
      SharedFileConfigPath: '',
    },
  });
  const env = { ...process.env };
  delete env.ACK_HOME; // the throw-away home is the service home, whatever the shell says
  return { appDir: path.join(home, 'app'), env, remove: () => fs.rmSync(home, { recursive: true, force: true }) };
}

/** Where `ack serve [DIR]` finds its settings: DIR itself, DIR/app, or none (a plain folder). */
export function locateAppDir(dir: string): { appDir: string } | { staticRoot: string } | { missing: string } {
  if (fs.existsSync(path.join(dir, 'appsettings.json'))) return { appDir: dir };
  if (fs.existsSync(path.join(dir, 'app', 'appsettings.json'))) return { appDir: path.join(dir, 'app') };
  return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? { staticRoot: dir } : { missing: dir };
}
