// The stream of all changes as a bot key sees it: only changes of endpoints where the key's platform
// takes part (as of the change's record), with other platforms' webhook URLs hidden. The reads and
// their formatting stay shared (changeReader.ts); each change's view for a platform is worked out
// once, by the first bot stream of that platform that sends it, and kept with the change for the
// others.
import { takesPart } from '../domain/botRights.ts';
import type { Platform } from '../domain/record.ts';
import { hidesWebhooks, redactedJsonFor } from '../domain/redaction.ts';
import { type FormattedChange, formatChangeOf } from './changeReader.ts';

const views = new WeakMap<FormattedChange, Partial<Record<Platform, Buffer | null>>>();

/**
 * The bytes a `platform` bot stream sends for `change`: null to send nothing; undefined for a reset
 * of one endpoint (its change is no longer kept) or an edit or delete of a message (which carries
 * no record), where the caller asks whether the platform takes part in that endpoint now.
 */
export function changeSeenBy(change: FormattedChange, platform: Platform): Buffer | null | undefined {
  const event = change.entry.event;
  if (event?.kind !== 'record') return undefined;
  let kept = views.get(change);
  const known = kept?.[platform];
  if (known !== undefined) return known;
  const record = event.record;
  const bytes = !takesPart(record, platform)
    ? null
    : hidesWebhooks(record, platform)
      ? formatChangeOf(change.entry, redactedJsonFor(record, event.recordJson, platform))
      : change.bytes;
  if (!kept) views.set(change, (kept = {}));
  kept[platform] = bytes;
  return bytes;
}
