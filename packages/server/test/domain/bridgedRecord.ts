// The record both bot-key rule tests start from: chat_a and chat_b bridged at position 0, chat_a alone
// at position 1, each position with its webhooks.
import { type EndpointRecord, initialRecord } from '../../src/domain/record.ts';

export function bridgedRecord(): EndpointRecord {
  const r = initialRecord();
  r.config.channels.chat_a = ['a0', 'a1'];
  r.config.channels.chat_b = ['b0'];
  r.config.webhooks.chat_a = ['https://a.example/0', 'https://a.example/1'];
  r.config.webhooks.chat_b = ['https://b.example/0'];
  return r;
}
