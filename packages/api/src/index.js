// Runtime entry of @chatbridge/api: where the bundled spec lives. The types are in schema.d.ts.
export const bundledSpecPath = new URL('../openapi.bundled.yaml', import.meta.url).pathname;
