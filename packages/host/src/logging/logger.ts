/**
 * The logger every part of the host and every module writes to. A thin interface over winston so
 * that modules do not depend on winston's types; `child` labels lines with a module or area name.
 */
export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  /** `error(message, err)`, or `error(message, properties, err)` for an error with properties. */
  error(message: string, meta?: Record<string, unknown> | Error, error?: Error): void;
  child(label: string): Logger;
}
