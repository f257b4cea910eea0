// What the benchmark stores and sends: a record shaped like a real bridged community (built with the
// server's own update rules, so it is exactly what the server would store), and the query of an
// update that always commits a change.
import { type EndpointRecord, initialRecord } from '../../packages/server/src/domain/record.ts';
import { applyUpdate, type UpdateParams } from '../../packages/server/src/domain/update.ts';

const BLACKLIST =
  'spam,scam,phishing,free-nitro,giveaway,crypto-airdrop,click-here,porn,casino,betting,loan,viagra,xxx,hack,cheat,aimbot,followers,likes4likes,dm-me,onlyfans';

/**
 * Three updates a community goes through: bridge channels, configure, record a message from chat_c.
 * `webhooks`: an origin (on a private address) that receives its deliveries at /a and /b.
 */
const setup = ({ selfuse = true, webhooks }: { selfuse?: boolean; webhooks?: string }): UpdateParams[] => [
  {
    channel_chat_a: '912345678901234500',
    channel_chat_b: 'channel-b-1',
    channel_chat_c: 'channel-c-1234',
    channel_chat_d: 'channel-d-0042',
    // .invalid never resolves: nothing the bench does can send a delivery anywhere.
    webhook_chat_a: webhooks
      ? `${webhooks}/a`
      : 'https://hooks.chat-a.invalid/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz012345',
    webhook_chat_b: webhooks ? `${webhooks}/b` : 'https://hooks.chat-b.invalid/hooks/channel-b-1/0123456789abcdef0123456789abcdef',
    blacklist: BLACKLIST,
    allowed_ids: '912345678901234567,912345678901234568',
    log_chat_a: '912345678901234599',
    selfuse: selfuse || webhooks !== undefined,
  },
  { channel_chat_a: '912345678901234501', channel_chat_c: 'channel-c-5678' },
  {
    sender: 'chat_c',
    sender_channel: 'channel-c-1234',
    message_author_name: 'Ada',
    message_author_avatar: 'https://cdn.chat-c.example.com/avatars/123456789/abcdef0123456789.png',
    message_author_id: 'user-123456',
    message_content: 'Hello from chat_c & friends? The release notes are pinned in #announcements; ask here if anything breaks.',
    message_attachments: 'https://cdn.chat-c.example.com/files/release-notes.png',
    message_embed: JSON.stringify({ title: 'Release', fields: [{ name: 'Version', value: '1.0', inline: false }] }),
    // No trigger: the message counts as relayed, so no delivery is queued and no message is pending.
  },
];

/** The record every benchmark endpoint starts with. */
export function benchRecord(options: Parameters<typeof setup>[0] = {}): EndpointRecord {
  let record = initialRecord();
  for (const params of setup(options)) {
    const outcome = applyUpdate(JSON.stringify(record), params, { allowPrivateWebhooks: options.webhooks !== undefined });
    if (!outcome.ok) throw new Error(`bench record setup rejected: ${JSON.stringify(outcome.issues)}`);
    record = outcome.record;
  }
  return record;
}

/**
 * The delivery scenario's record: channel-c-1234 of chat_c bridged to a chat_a channel whose webhook
 * is `${origin}/a` (on a private address: the server must allow it), `selfuse` on, no other
 * platform bridged, so a message is finished once that webhook has it.
 */
export function deliveryRecord(origin: string): EndpointRecord {
  const params: UpdateParams = {
    channel_chat_a: '912345678901234500',
    channel_chat_c: 'channel-c-1234',
    webhook_chat_a: `${origin}/a`,
    selfuse: true,
  };
  const outcome = applyUpdate(JSON.stringify(initialRecord()), params, { allowPrivateWebhooks: true });
  if (!outcome.ok) throw new Error(`delivery record setup rejected: ${JSON.stringify(outcome.issues)}`);
  return outcome.record;
}

/**
 * The query string (after the token) of the n-th update request. Three scalar overwrites whose values
 * contain n, so every request changes the stored record and commits a write (list appends would become
 * no-ops once a value is present, and lists are capped). No trigger: no webhook delivery is queued.
 */
export function updateQuery(n: number): string {
  const content = `bench update ${n}: relay this message to every bridged channel`;
  return (
    `message_content=${encodeURIComponent(content)}` +
    `&message_author_name=${encodeURIComponent(`Bench author ${n}`)}` +
    `&log_chat_b=log-b-${n}`
  );
}

/** Matches a record written by updateQuery, for the after-run check. */
export const UPDATED_CONTENT = /^bench update \d+: /;
