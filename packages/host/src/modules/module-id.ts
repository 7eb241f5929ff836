/** A module id is a plain folder name: never a path, never `.` or `..`. */
export function isPlainModuleID(value: string): boolean {
  return /^[A-Za-z0-9_.-]+$/.test(value) && value !== '.' && value !== '..';
}
