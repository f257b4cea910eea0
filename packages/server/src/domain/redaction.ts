// What a bot key sees of a record: everything, except other platforms' webhook URLs. A webhook URL is
// a secret (whoever holds it can post into that channel), and a bot needs only its own. Each hidden
// URL is replaced by one fixed marker, element for element, so the lists keep their lengths and
// positions: bridges are matched by position, and a bot still sees that a webhook stands there.
import { type EndpointRecord, type Platform, WEBHOOK_PLATFORMS } from './record.ts';

/**
 * Stands in for another platform's webhook URL. An `https` URL on the reserved `.invalid` domain
 * (RFC 6761: never resolves), as long as the shortest webhook URL an update accepts (50 characters),
 * so it fits every schema a webhook URL fits.
 */
export const REDACTED_WEBHOOK = 'https://redacted.invalid/webhook-of-another-platform';

/** Whether a `platform` bot key would see anything hidden in this record. */
export const hidesWebhooks = (record: EndpointRecord, platform: Platform): boolean =>
  WEBHOOK_PLATFORMS.some((p) => p !== platform && record.config.webhooks[p].length > 0);

/** The record as a `platform` bot key sees it; the record itself when nothing is hidden (never mutated). */
export function redactedFor(record: EndpointRecord, platform: Platform): EndpointRecord {
  if (!hidesWebhooks(record, platform)) return record;
  const webhooks = { ...record.config.webhooks };
  for (const p of WEBHOOK_PLATFORMS) if (p !== platform) webhooks[p] = webhooks[p].map(() => REDACTED_WEBHOOK);
  // Spreads keep the members' order, so the JSON reads as the stored record's does.
  return { ...record, config: { ...record.config, webhooks } };
}

/** `json` (the record's JSON text) as a `platform` bot key sees it: the same text when nothing is hidden. */
export const redactedJsonFor = (record: EndpointRecord, json: string, platform: Platform): string =>
  hidesWebhooks(record, platform) ? JSON.stringify(redactedFor(record, platform)) : json;
