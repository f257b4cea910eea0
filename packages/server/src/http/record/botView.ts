// The record as the request's credential may see it: a bot key sees other platforms' webhook URLs
// replaced (domain/redaction.ts); a token or the admin token sees the record as committed.
import { hidesWebhooks, redactedFor } from '../../domain/redaction.ts';
import type { EndpointRecord } from '../../domain/record.ts';
import { type Actor, actingPlatform } from '../auth/authenticate.ts';
import type { JsonText } from '../respond.ts';

/** `view` as `actor` may see it: the same object when nothing is hidden from it (read only for a bot key). */
export function seenBy(actor: Actor, view: JsonText<EndpointRecord>): JsonText<EndpointRecord> {
  const platform = actingPlatform(actor);
  if (platform === undefined) return view;
  const record = view.parsed();
  if (!hidesWebhooks(record, platform)) return view;
  const redacted = redactedFor(record, platform);
  return { json: JSON.stringify(redacted), parsed: () => redacted };
}
