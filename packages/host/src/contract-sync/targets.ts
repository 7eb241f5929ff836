import path from 'node:path';
import { resolveContainedPath, type PathRejection } from '../paths/contained-path.js';

/** The contract types contract sync and sync upload accept (docs/sync.md). */
export const CONTRACT_TYPES = [
  'dbclient',
  'graphclient',
  'function',
  'transact',
  'command',
  'prompter',
  'repository',
  'wwwroot',
] as const;
export type ContractType = (typeof CONTRACT_TYPES)[number];

/** One of the eight contract types in any case (lower-cased), else undefined. */
export function parseContractType(value: string | undefined): ContractType | undefined {
  const v = value?.trim().toLowerCase();
  return (CONTRACT_TYPES as readonly string[]).includes(v ?? '') ? (v as ContractType) : undefined;
}

export interface ContractSyncTarget {
  /** The folder the destination path is relative to. */
  root: string;
  /** Absolute path of the file. */
  absolute: string;
}

export type TargetsResult =
  { ok: true; relative: string; targets: ContractSyncTarget[] } | { ok: false; reason: PathRejection };

/**
 * Targets under SERVICE_HOME (docs/sync.md): `modules/<moduleID>/Contracts/<type>/<dest>` and
 * `contracts/<type>/<dest>`, or `modules/<moduleID>/wwwroot/<moduleID>/<dest>` for `wwwroot`.
 */
export function contractSyncTargets(
  serviceHome: string,
  moduleID: string,
  contractType: ContractType,
  destFilePath: string,
): TargetsResult {
  const roots =
    contractType === 'wwwroot'
      ? [path.join(serviceHome, 'modules', moduleID, 'wwwroot', moduleID)]
      : [
          path.join(serviceHome, 'modules', moduleID, 'Contracts', contractType),
          path.join(serviceHome, 'contracts', contractType),
        ];
  const targets: ContractSyncTarget[] = [];
  let relative = '';
  for (const root of roots) {
    const resolved = resolveContainedPath(root, destFilePath);
    if (!resolved.ok) return resolved;
    relative = resolved.relative;
    targets.push({ root, absolute: resolved.absolute });
  }
  return { ok: true, relative, targets };
}
