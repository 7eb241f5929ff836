export { buildProgram, runCli, EXIT } from './program.js';
export { builtInModules } from './registry.js';
export { serve } from './commands/serve.js';
