/**
 * `@ack/loader`: joins the host's shared files (`/shared-files/manifest`, docs/loader.md) to a screen's
 * start-up. `joinSharedFiles` for a screen that has its own loader, `start` (or the
 * `data-ack-autoload` attribute of the IIFE bundle) for a plain page.
 */
export { joinSharedFiles, start, ready, log, LOADED_EVENT } from './loader.js';
export type { LoaderOptions, LoaderLogEntry, LoaderResult, TextAsset } from './loader.js';
export { kindOf, textAssetId, textAssetType } from './rules.js';
export type { SharedFileKind } from './rules.js';
