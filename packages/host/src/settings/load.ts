import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { HostSettingsSchema, type HostSettings } from './schema.js';
import { JsonFileError, readJsonFile, type JsonFile } from './json-file.js';
import { applyEnvOverrides } from './env-overrides.js';
import { readAsDotNet, describeExpected, schemaAt } from './schema-walk.js';
import { isSecretKey, redactSecretsInText } from './redact.js';
import { describeUnknownKeys, findUnknownKeys } from './unknown-keys.js';
import { sessionStoreProblems } from './session-store.js';

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
  /** Mistakes that do not stop start-up (unknown keys, with the closest known one); logged as warnings. */
  warnings: string[];
}

/**
 * Reads `<appDir>/appsettings.json`, applies environment overrides (`AppSettings__Key=value`, see
 * env-overrides.ts) and validates the result. Keys match ignoring case, as in .NET configuration.
 * Every problem is reported, one line each, naming the file (with line:column when the value is in
 * it), the key as a colon path, and what was expected; values of secret keys are not echoed.
 */
export function loadHostSettings(appDir: string, env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  const file = path.resolve(appDir, 'appsettings.json');
  let json: JsonFile;
  try {
    json = readJsonFile(file);
  } catch (err) {
    if (!(err instanceof JsonFileError)) throw err;
    // The home itself given instead of its app/ folder: say where the settings are.
    const inApp = path.join(path.resolve(appDir), 'app', 'appsettings.json');
    const hint =
      !fs.existsSync(file) && fs.existsSync(inApp)
        ? `; ${path.resolve(appDir)} looks like an application home: its settings are in ${path.dirname(inApp)} (--app-dir ${path.dirname(inApp)})`
        : '';
    throw new SettingsError(err.message + hint);
  }
  if (json.value === null || typeof json.value !== 'object' || Array.isArray(json.value)) {
    throw new SettingsError(
      `${file}: expected a JSON object at the top level, got ${describeInput(json.value, false)}`,
    );
  }
  const raw = readAsDotNet(json.value, HostSettingsSchema) as Record<string, unknown>;
  // Every key of AppSettings is this host's; other sections (Kestrel, Serilog) carry keys for other
  // readers, so there only a key close to a known one is pointed out.
  const unknown = findUnknownKeys(raw, HostSettingsSchema, {
    reportAll: (parent) => (parent.length === 0 ? false : parent[0] === 'AppSettings'),
  });
  const warnings = describeUnknownKeys(file, json, unknown);
  const overrides = applyEnvOverrides(raw, env, HostSettingsSchema);
  const lines = overrides.issues.map(
    (i) => `${file}: ${i.key}: ${i.problem} (from environment variable ${i.variable})`,
  );
  // Parsed once: zod's compiled (`new Function`) parser costs start-up more than it saves here.
  const parsed = HostSettingsSchema.safeParse(raw, { reportInput: true, jitless: true });
  if (!parsed.success) {
    for (const issue of flatten(parsed.error.issues, [])) {
      const key = issue.path.join(':') || '(top level)';
      const variable = sourceVariable(overrides.sources, issue.path);
      const where = variable ? '' : (json.locate(issue.path) ?? json.locate(issue.path.slice(0, -1)));
      lines.push(
        `${file}${where ? `:${where}` : ''}: ${key}: ${explain(issue)}${variable ? ` (from environment variable ${variable})` : ''}`,
      );
    }
  }
  if (parsed.success) {
    // What start-up needs of a shared session store, checked here so that every reader agrees.
    for (const problem of sessionStoreProblems(parsed.data.AppSettings.SessionState)) {
      const at = ['AppSettings', 'SessionState', problem.key];
      const variable = sourceVariable(overrides.sources, at);
      const where = variable ? '' : json.locate(at);
      lines.push(
        `${file}${where ? `:${where}` : ''}: ${problem.message}${variable ? ` (from environment variable ${variable})` : ''}`,
      );
    }
  }
  if (lines.length > 0) throw new SettingsError(lines.join('\n'));
  return { settings: parsed.data!, file, warnings };
}

interface FlatIssue {
  path: (string | number)[];
  code: string;
  message: string;
  input?: unknown;
  hasInput: boolean;
}

/** Unions report one issue per branch: keep the branch that matched the value's type, if one did. */
function flatten(issues: readonly z.core.$ZodIssue[], prefix: (string | number)[]): FlatIssue[] {
  const out: FlatIssue[] = [];
  for (const issue of issues) {
    const at = [...prefix, ...(issue.path as (string | number)[])];
    if (issue.code === 'invalid_union') {
      const deeper = issue.errors.filter((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
      if (deeper.length === 1) {
        out.push(...flatten(deeper[0]!, at));
        continue;
      }
    }
    out.push({
      path: at,
      code: issue.code,
      message: issue.message,
      input: issue.input,
      hasInput: 'input' in issue && issue.input !== undefined,
    });
  }
  return out;
}

function explain(issue: FlatIssue): string {
  const schema = schemaAt(HostSettingsSchema, issue.path);
  let expected: string;
  if (issue.code === 'invalid_format' && !/^Invalid/.test(issue.message)) expected = issue.message;
  else if (schema) expected = describeExpected(schema);
  else expected = issue.message;
  if (!issue.hasInput) return `missing; expected ${expected}`;
  const secret = issue.path.some((seg) => typeof seg === 'string' && isSecretKey(seg));
  return `expected ${expected}, got ${describeInput(issue.input, secret)}`;
}

function describeInput(value: unknown, secret: boolean): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string': {
      if (secret) return 'a string (value not shown)';
      const text = redactSecretsInText(value);
      return JSON.stringify(text.length > 60 ? text.slice(0, 57) + '...' : text);
    }
    case 'number':
    case 'boolean':
      return secret ? `a ${typeof value}` : String(value);
    case 'object':
      return 'an object';
    default:
      return 'nothing';
  }
}

/** The environment variable that set the value at `issuePath` (or one of its parents). */
function sourceVariable(sources: Map<string, string>, issuePath: readonly (string | number)[]): string | undefined {
  for (let n = issuePath.length; n > 0; n--) {
    const hit = sources.get(issuePath.slice(0, n).join(':').toLowerCase());
    if (hit) return hit;
  }
  return undefined;
}
