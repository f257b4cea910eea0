// The spec's own schemas, applied outside HTTP: an imported record must be a record the API could
// answer with, and a value taken from the original service must meet the bounds the API puts on the
// update parameter that would set it. Both are read from the bundled spec (the API's validator reads
// the same file), so no bound is written twice.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { loadSpecIndex, type SpecIndex } from '../spec/specIndex.ts';

// ajv-formats is CommonJS and also exports its plugin as `default`.
const addFormats = ajvFormats.default;

const SPEC_ID = 'https://chatbridge.invalid/openapi.bundled.json';

export interface SpecSchemas {
  /** Why `value` is not an EndpointRecord of the spec (undefined: it is one). */
  recordProblem(value: unknown): string | undefined;
  /** Why `value` breaks the schema of update parameter `name` (undefined: it meets it). */
  parameterProblem(name: string, value: unknown): string | undefined;
}

const describe = (errors: ErrorObject[] | null | undefined, prefix: string) =>
  (errors ?? []).map((e) => `${prefix}${e.instancePath} ${e.message ?? 'is invalid'}`.trim()).join('; ');

/** Compiles the spec's schemas on first use. */
export function loadSpecSchemas(spec: SpecIndex = loadSpecIndex()): SpecSchemas {
  const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  // The bundle is one schema resource, so `#/components/...` pointers resolve inside it; its
  // OpenAPI-only members are inert keywords.
  for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'webhooks', 'components']) ajv.addKeyword(keyword);
  ajv.addSchema({ ...spec.document, $id: SPEC_ID });
  const compiled = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    let v = compiled.get(pointer);
    if (!v) compiled.set(pointer, (v = ajv.compile({ $ref: `${SPEC_ID}#${encodeURI(pointer)}` })));
    return v;
  };
  // updateEndpoint's parameters (its path's and its own): another operation may give one of these
  // names another schema (removeFromEndpoint's `log_chat_a` is a boolean).
  const parameterAt = new Map((spec.operation('updateEndpoint')?.parameters ?? []).map((p) => [p.name, p.pointer]));
  return {
    recordProblem(value) {
      const validate = validator('/components/schemas/EndpointRecord');
      return validate(value) ? undefined : describe(validate.errors, 'record');
    },
    parameterProblem(name, value) {
      const pointer = parameterAt.get(name);
      if (!pointer) throw new Error(`the spec has no parameter ${name}`);
      const validate = validator(`${pointer}/schema`);
      return validate(value) ? undefined : describe(validate.errors, '');
    },
  };
}
