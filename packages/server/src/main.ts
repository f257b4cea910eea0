// The server's entry point (dist/main.js). The Node version is checked before any other module of the
// server is loaded (an older Node cannot even link them: node:sqlite), then the command line, and only
// then is the server itself loaded and started (serverProcess.ts).
import { requireSupportedNode } from './nodeVersion.ts';

requireSupportedNode();
const { serverCommandLine } = await import('./serverArgs.ts');
const commandLine = serverCommandLine(process.argv.slice(2));
if (commandLine.kind === 'exit') {
  process.stdout.write(commandLine.stdout);
  process.stderr.write(commandLine.stderr);
  process.exit(commandLine.code);
}
await import('./serverProcess.ts');
