// Runtime entry of @chatbridge/api: where the bundled spec lives. The types are in schema.d.ts.
import { fileURLToPath } from 'node:url';

// fileURLToPath, not URL.pathname: a checkout under a path with spaces or non-ASCII characters (or on
// Windows) must give a path the file system finds, not a percent-encoded one.
export const bundledSpecPath = fileURLToPath(new URL('../openapi.bundled.yaml', import.meta.url));
