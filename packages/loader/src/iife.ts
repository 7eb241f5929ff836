/**
 * Entry of the `<script src>` bundle (global `AckLoader`). With `data-ack-autoload` on its script
 * tag it starts at once, reading `data-ack-base-url` and `data-ack-id-prefix` from the same tag.
 */
import { start } from './loader.js';

export * from './index.js';

const tag = document.currentScript;
if (tag && tag.hasAttribute('data-ack-autoload')) {
  void start({ baseUrl: tag.dataset.ackBaseUrl, idPrefix: tag.dataset.ackIdPrefix });
}
