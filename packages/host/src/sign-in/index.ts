import type { RequestHandler } from 'express';
import type { HostSettings } from '../settings/schema.js';
import type { Keyring } from '../keys/keyring.js';
import type { Logger } from '../logging/logger.js';

/**
 * Phase 3b: sign-in cookie authentication. Reads the signed authentication cookie and makes the
 * signed-in user available to every module. (Filled in by the dev sign-in issue.)
 */
export function createSignInPhase(settings: HostSettings, keys: Keyring, logger: Logger): RequestHandler | undefined {
  void settings;
  void keys;
  void logger;
  return undefined;
}
