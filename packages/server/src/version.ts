// The server's version: its package.json's, read once. package.json sits one folder above both the
// sources (src/) and the build (dist/), in the checkout and in the deployable folder alike.
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
