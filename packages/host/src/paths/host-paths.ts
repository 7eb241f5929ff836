import path from 'node:path';
import { expandEnvVars } from './env-expand.js';

/**
 * The application home's paths (docs/architecture.md). Every relative path in appsettings.json, module.json
 * and the shared-file catalog resolves from the entry base path, never from the file it is in.
 */
export interface HostPaths {
  /** The folder that holds appsettings.json (`--app-dir`, else the working directory). */
  readonly entryBasePath: string;
  /** SERVICE_HOME (the original host's name): `ACK_HOME` if set, else the parent of the entry base path. */
  readonly serviceHome: string;
  /** Expands environment variables, then resolves a relative path from the entry base path. */
  resolve(configured: string): string;
}

export function createHostPaths(entryBasePath: string, env: NodeJS.ProcessEnv = process.env): HostPaths {
  const entry = path.resolve(entryBasePath);
  const home = env.ACK_HOME ? path.resolve(expandEnvVars(env.ACK_HOME, env)) : path.dirname(entry);
  return {
    entryBasePath: entry,
    serviceHome: home,
    resolve: (configured) => path.resolve(entry, expandEnvVars(configured, env)),
  };
}
