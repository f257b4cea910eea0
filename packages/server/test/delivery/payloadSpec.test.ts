// The webhook payload's limits are published in the spec (WebhookPayload, WebhookEmbed,
// WebhookEmbedField); the code that cuts text to them must use the same numbers, or receivers that
// trust the contract get payloads it does not describe.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bundledSpecPath } from '@chatbridge/api';
import { PAYLOAD_LIMITS } from '../../src/delivery/payload.ts';

type Json = Record<string, any>;
const schemas = (parse(readFileSync(bundledSpecPath, 'utf8')) as Json).components.schemas as Json;

describe('the webhook payload limits', () => {
  it("when the code's limits are compared with the spec's webhook schemas, then they are the same numbers", () => {
    const embed = schemas.WebhookEmbed.properties;
    const field = schemas.WebhookEmbedField.properties;
    expect({
      content: schemas.WebhookPayload.properties.content.maxLength,
      username: schemas.WebhookPayload.properties.username.maxLength,
      embedTitle: embed.title.maxLength,
      embedDescription: embed.description.maxLength,
      embedFooter: embed.footer.properties.text.maxLength,
      embedFields: embed.fields.maxItems,
      fieldName: field.name.maxLength,
      fieldValue: field.value.maxLength,
    }).toEqual({
      content: PAYLOAD_LIMITS.content,
      username: PAYLOAD_LIMITS.username,
      embedTitle: PAYLOAD_LIMITS.embedTitle,
      embedDescription: PAYLOAD_LIMITS.embedDescription,
      embedFooter: PAYLOAD_LIMITS.embedFooter,
      embedFields: PAYLOAD_LIMITS.embedFields,
      fieldName: PAYLOAD_LIMITS.fieldName,
      fieldValue: PAYLOAD_LIMITS.fieldValue,
    });
  });
});
