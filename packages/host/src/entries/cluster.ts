// `@ack/host/cluster`: what the `ack` command runs the host with (the primary of `--workers`, the
// listeners' plan, the development certificate, the configuration watch). Not an API for modules;
// it changes with the command (docs/api.md "Subpath exports").
export { Primary, READY_MESSAGE, reloadStateFile, STOP_MESSAGE } from '../cluster/primary.js';
export type { PrimaryOptions, ReloadState } from '../cluster/primary.js';
export {
  createInvalidationBus,
  describeInvalidation,
  isInvalidateMessage,
  INVALIDATE_MESSAGE,
} from '../cluster/invalidation.js';
export type { InvalidateMessage, Invalidation, InvalidationBus, InvalidationOrigin } from '../cluster/invalidation.js';
export { watchConfiguration, configurationFiles, checkConfiguration } from '../cluster/config-watch.js';
export type { ConfigWatch } from '../cluster/config-watch.js';
export { bindAddress, ensureDevCertificate, planEndpoints } from '../lifecycle/listeners.js';
export type { ListenerFailure, ListeningEndpoint } from '../lifecycle/listeners.js';
export { createDevCertificate, devCertificateFiles, hasDevCertificate } from '../lifecycle/dev-cert.js';
