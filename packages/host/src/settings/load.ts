import fs from 'node:fs';
import path from 'node:path';
import { HostSettingsSchema, type HostSettings } from './schema.js';

/** A settings file that cannot be used. Start-up stops with this message and exit code 2. */
export class SettingsError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

export interface LoadedSettings {
  settings: HostSettings;
  /** Absolute path of the appsettings.json that was read. */
  file: string;
}

/** Reads and validates `<appDir>/appsettings.json`. (Env overrides and messages: see issue 2.) */
export function loadHostSettings(appDir: string, env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  void env;
  const file = path.resolve(appDir, 'appsettings.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new SettingsError(`${file}: cannot read the settings file`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new SettingsError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = HostSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(`${file}: ${issue.path.join(':')}: ${issue.message}`);
  }
  return { settings: parsed.data, file };
}
