import winston from 'winston';
import type { HostSettings } from '../settings/schema.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from './logger.js';

export interface HostLogging {
  logger: Logger;
  /** Flushes buffered sinks and closes files. */
  close(): Promise<void>;
}

export interface LoggingOptions {
  /** No console sink (tests). */
  quiet?: boolean;
}

/** Builds the host's logger from the `Serilog` section. (Placeholder sinks; see issue 2.) */
export function createHostLogging(settings: HostSettings, paths: HostPaths, options: LoggingOptions = {}): HostLogging {
  void settings;
  void paths;
  const base = winston.createLogger({
    level: 'info',
    transports: [new winston.transports.Console({ silent: options.quiet === true })],
    format: winston.format.simple(),
  });
  const wrap = (w: winston.Logger): Logger => ({
    debug: (m, meta) => void w.debug(m, meta),
    info: (m, meta) => void w.info(m, meta),
    warn: (m, meta) => void w.warn(m, meta),
    error: (m, meta) => void w.error(m, meta instanceof Error ? { err: meta.message } : meta),
    child: (label) => wrap(w.child({ label })),
  });
  return {
    logger: wrap(base),
    close: () => new Promise((resolve) => { base.on('finish', () => resolve()); base.end(); }),
  };
}
