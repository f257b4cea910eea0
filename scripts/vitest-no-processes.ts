// Setup file of the unit projects (server, client): their tests run in-process, so starting a child
// process there fails at once, naming where such a test belongs.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const refuse = (name: string) => () => {
  throw new Error(
    `child_process.${name}: unit tests do not start processes; list this test file in SPAWNING in vitest.config.ts (the integration project)`,
  );
};
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.assign(childProcess, { [name]: refuse(name) });
}
syncBuiltinESMExports();
