import { describe, expect, it } from 'vitest';
import { failure, useServer } from './harness.ts';

const HTTP_HOOK = 'http://127.0.0.1:9/api/webhooks/1234/abcdefghijklmnopqrstuvwxyz012345';
const h = useServer({ allowPrivateWebhooks: true });

describe('webhook URL policy with CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE=true (development)', () => {
  it('when a plain http webhook is sent, then it is accepted', async () => {
    const { id, token } = await h.endpoint();
    const r = await h.client.updateEndpoint(id, token, { webhook_chat_a: HTTP_HOOK });
    expect(r.config.webhooks.chat_a).toEqual([HTTP_HOOK]);
  });

  it('when a non-http(s) URL is sent, then it is still rejected', async () => {
    const { id, token } = await h.endpoint();
    const e = await failure(
      h.client.updateEndpoint(id, token, { webhook_chat_b: 'ftp://files.example.com/hooks/abcdefghijklmnopqrstuvwxyz0123' }),
    );
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'webhook_chat_b' })]);
  });
});
