// The record as the request's credential may see it: a bot key sees other platforms' webhook URLs
// replaced (domain/redaction.ts); a token or the admin token sees the record as committed.
import { hidesWebhooks, redactedFor } from '../../domain/redaction.ts';
import type { EndpointRecord } from '../../domain/record.ts';
import { type Actor, actingPlatform } from '../auth/authenticate.ts';

/** The record as `actor` sees it: the same object when nothing is hidden from it. */
export function recordFor(actor: Actor, record: EndpointRecord): EndpointRecord {
  const platform = actingPlatform(actor);
  return platform === undefined ? record : redactedFor(record, platform);
}

/** The record and its JSON text as `actor` sees them: the same objects when nothing is hidden from it. */
export function viewFor(actor: Actor, record: EndpointRecord, json: string): { record: EndpointRecord; json: string; hid: boolean } {
  const platform = actingPlatform(actor);
  if (platform === undefined || !hidesWebhooks(record, platform)) return { record, json, hid: false };
  const view = redactedFor(record, platform);
  return { record: view, json: JSON.stringify(view), hid: true };
}
