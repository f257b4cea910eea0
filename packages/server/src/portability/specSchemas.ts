// The spec's own schemas, applied outside HTTP: an imported record must be a record the API could
// answer with, and a value taken from the original service must meet the bounds the API puts on the
// update parameter that would set it. Both are read from the bundled spec (the API's validator reads
// the same file), so no bound is written twice.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@chatbridge/api';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

// ajv-formats is CommonJS and also exports its plugin as `default`.
const addFormats = ajvFormats.default;

const SPEC_ID = 'https://chatbridge.invalid/openapi.bundled.json';
const PARAMETER_REF = '#/components/parameters/';

interface Ref {
  $ref?: string;
}

export interface SpecSchemas {
  /** Why `value` is not an EndpointRecord of the spec (undefined: it is one). */
  recordProblem(value: unknown): string | undefined;
  /** Why `value` breaks the schema of update parameter `name` (undefined: it meets it). */
  parameterProblem(name: string, value: unknown): string | undefined;
}

const describe = (errors: ErrorObject[] | null | undefined, prefix: string) =>
  (errors ?? []).map((e) => `${prefix}${e.instancePath} ${e.message ?? 'is invalid'}`.trim()).join('; ');

/** Reads the bundled spec once and compiles its schemas on first use. */
export function loadSpecSchemas(specPath: string = bundledSpecPath): SpecSchemas {
  const spec = parseYaml(readFileSync(specPath, 'utf8')) as {
    components: { parameters: Record<string, { name: string }> };
    paths: Record<string, { parameters?: Ref[] } & Record<string, { operationId?: string; parameters?: Ref[] }>>;
  };
  const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  // The bundle is one schema resource, so `#/components/...` pointers resolve inside it; its
  // OpenAPI-only members are inert keywords.
  for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'webhooks', 'components']) ajv.addKeyword(keyword);
  ajv.addSchema({ ...spec, $id: SPEC_ID });
  const compiled = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    let v = compiled.get(pointer);
    if (!v) compiled.set(pointer, (v = ajv.compile({ $ref: `${SPEC_ID}#${pointer}` })));
    return v;
  };
  // updateEndpoint's parameters (its path's and its own): another operation may give one of these
  // names another schema (removeFromEndpoint's `log_chat_a` is a boolean).
  const item = Object.values(spec.paths).find((i) => i.post?.operationId === 'updateEndpoint');
  const refs = [...(item?.parameters ?? []), ...(item?.post?.parameters ?? [])];
  const keys = refs.flatMap((r) => (r.$ref?.startsWith(PARAMETER_REF) ? [r.$ref.slice(PARAMETER_REF.length)] : []));
  const parameterKey = new Map(keys.map((key) => [spec.components.parameters[key]!.name, key]));
  return {
    recordProblem(value) {
      const validate = validator('/components/schemas/EndpointRecord');
      return validate(value) ? undefined : describe(validate.errors, 'record');
    },
    parameterProblem(name, value) {
      const key = parameterKey.get(name);
      if (!key) throw new Error(`the spec has no parameter ${name}`);
      const validate = validator(`/components/parameters/${key}/schema`);
      return validate(value) ? undefined : describe(validate.errors, '');
    },
  };
}
