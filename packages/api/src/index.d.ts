export type * from './schema.d.ts';
/** Absolute path of the bundled OpenAPI document (openapi.bundled.yaml). */
export declare const bundledSpecPath: string;
