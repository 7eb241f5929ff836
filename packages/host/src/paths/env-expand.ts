/**
 * Expands environment variables in a configured path: `%NAME%` (as the original host does on every
 * OS), then `${NAME}` and `$NAME`. Unset variables are left as written, so the mistake shows in the
 * path that fails rather than turning into an empty segment.
 */
export function expandEnvVars(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return value
    .replace(/%([A-Za-z_][A-Za-z0-9_]*)%/g, (m, name: string) => env[name] ?? m)
    .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string) => env[name] ?? m)
    .replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name: string) => env[name] ?? m);
}
