import { describe, expect, it } from 'vitest';
import { useServer } from './harness.ts';

const h = useServer();

describe('concurrent updates', () => {
  it('when 400 appends arrive at once, then every one of them survives', async () => {
    const { id, token } = await h.endpoint();
    const words = Array.from({ length: 400 }, (_, i) => `word-${i}`);
    const results = await Promise.allSettled(words.map((blacklist) => h.client.updateEndpoint(id, token, { blacklist })));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const record = await h.client.getEndpoint(id, token);
    expect(new Set(record.config.blacklist)).toEqual(new Set(words));
  });

  it('when different lists are appended concurrently, then no update overwrites another', async () => {
    const { id, token } = await h.endpoint();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        h.client.updateEndpoint(id, token, i % 2 ? { channel_chat_c: `chan-c-${i}` } : { allowed_ids: `user-${i}` }),
      ),
    );
    const record = await h.client.getEndpoint(id, token);
    expect(record.config.channels.chat_c).toHaveLength(20);
    expect(record.config['allowed-ids']).toHaveLength(20);
  });
});
