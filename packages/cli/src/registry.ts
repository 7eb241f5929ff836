import type { ModuleRegistry } from '@ack/host';
import { wwwrootModule } from '@ack/wwwroot';

/** The modules built into `ack serve`. The host imports none of them; it is handed this registry. */
export const builtInModules: ModuleRegistry = {
  wwwroot: wwwrootModule,
};
