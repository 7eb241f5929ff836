/** What happened to a contract file (docs/modules.md "Contract changes"), as sync and contract sync name it. */
export type ChangeType = 'Created' | 'Changed' | 'Deleted';

/** `Created`, `Changed` or `Deleted` in any case; undefined for anything else. */
export function parseChangeType(value: string | undefined): ChangeType | undefined {
  const v = value?.trim().toLowerCase();
  return v === 'created' ? 'Created' : v === 'changed' ? 'Changed' : v === 'deleted' ? 'Deleted' : undefined;
}
