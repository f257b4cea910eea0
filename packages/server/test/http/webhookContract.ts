// The webhook request body as the spec's `webhooks.messagePending` declares it: a validator compiled
// from the bundled spec, so relay tests check what receivers actually get against the published
// contract rather than against the server's own types.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';
import { bundledSpecPath } from '@chatbridge/api';

const SPEC_ID = 'https://chatbridge.test/openapi.bundled.json';
const spec = parse(readFileSync(bundledSpecPath, 'utf8')) as Record<string, unknown>;
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
ajvFormats.default(ajv);
// The bundle is one schema resource so that its `#/components/...` pointers resolve; its OpenAPI
// members are inert keywords.
for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'webhooks', 'components']) ajv.addKeyword(keyword);
ajv.addSchema({ ...spec, $id: SPEC_ID });
const validate = ajv.compile({ $ref: `${SPEC_ID}#/webhooks/messagePending/post/requestBody/content/application~1json/schema` });

/** What is wrong with `body` as a webhook payload (each Ajv error as `path message`); empty when it complies. */
export function payloadViolations(body: unknown): string[] {
  if (validate(body)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
}
