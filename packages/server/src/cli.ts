// The CLI's entry point (`pnpm chatbridge`, dist/cli.js in the deployable). The Node version is checked
// before any other module of the server is loaded (an older Node cannot even link them: node:sqlite);
// then the commands are loaded and run (cliProgram.ts).
import { requireSupportedNode } from './nodeVersion.ts';

requireSupportedNode();
await import('./cliProgram.ts');
