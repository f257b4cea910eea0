// The lookup index's rows of one record: (platform, channel, bridge) for every element of its
// `config.channels` lists. Both adapters write them in the same transaction as the record, so a
// lookup never sees an index behind the records.
import { type EndpointRecord, type Platform, PLATFORMS } from '../../domain/record.ts';

export interface ChannelEntry {
  platform: Platform;
  channel: string;
  bridge: number;
}

export function channelEntries(record: EndpointRecord): ChannelEntry[] {
  return PLATFORMS.flatMap((platform) => record.config.channels[platform].map((channel, bridge) => ({ platform, channel, bridge })));
}

/**
 * The index rows of `next`, or undefined when the committed record (`currentJson`) has the same
 * channels, which is what almost every write (a message, a read flag) leaves: its index rows stand.
 *
 * Told from the committed text without parsing it: records are stored as JSON.stringify writes them,
 * and `"channels":` followed by an object can only be the key of `config.channels` (every object of
 * the record's schema has fixed keys, and a `"` inside a JSON string is always escaped), so finding
 * the new lists' serialisation there means the lists are equal. Any other spelling of the same lists
 * (another key order, whitespace) is not found and the rows are written again: wasted work, never a
 * stale index. It spares every write a parse of the committed record.
 */
export function changedChannelEntries(currentJson: string, next: EndpointRecord): ChannelEntry[] | undefined {
  return currentJson.includes(`"channels":${JSON.stringify(next.config.channels)}`) ? undefined : channelEntries(next);
}
