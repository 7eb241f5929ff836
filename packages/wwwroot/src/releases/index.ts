export { ReleaseStore, ReleaseError } from './store.js';
export type { ReleaseManifest, ReleaseInfo, ReleaseStep, ReleaseStoreOptions, Staging } from './store.js';
export { RELEASES_FOLDER, parsePrefix } from './layout.js';
export { treeSummary } from './tree-digest.js';
