export { ReleaseStore, ReleaseError } from './store.js';
export type { ReleaseManifest, ReleaseInfo, ReleaseStep, ReleaseStoreOptions, Staging } from './store.js';
export { RELEASES_FOLDER, parsePrefix, treeSummary } from './layout.js';
