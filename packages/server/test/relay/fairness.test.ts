// Webhook fairness between tenants, through the real service and a local receiver that never answers
// the hanging tenants' webhooks. Real time, kept short: the point is how long a healthy tenant waits.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChatbridgeClient, createChatbridgeClient } from '@chatbridge/client';
import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing.ts';
import { eventually } from '../http/receiver.ts';

/** Answers 204 at once, except under /hang/, where it holds the request until closed. */
async function startHangingReceiver() {
  const held: ServerResponse[] = [];
  const hanging: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/hang/')) {
      hanging.push(req.url);
      held.push(res);
    } else {
      res.writeHead(204).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    hanging,
    url: (path: string) => `http://127.0.0.1:${port}/${path}/${'x'.repeat(40)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function start(options: TestServerOptions = {}) {
  const receiver = await startHangingReceiver();
  cleanup.push(receiver.close);
  // A short stop grace: the hanging attempts are cut short when the test ends.
  const server = await startTestServer({ allowPrivateWebhooks: true, ...options, relay: { stopGraceMs: 50, ...options.relay } });
  cleanup.push(() => server.close());
  return { receiver, server, client: createChatbridgeClient({ baseUrl: server.url }) };
}

/** A self-user endpoint bridging chat_a (webhook `hook`) and chat_b (no webhook) on bridge 0. */
async function bridged(server: TestServer, client: ChatbridgeClient, id: string, hook: string) {
  const token = await server.provision(id);
  await client.updateEndpoint(id, token, { channel_chat_a: 'a-0000-chan', webhook_chat_a: hook, channel_chat_b: 'b-0000-chan' });
  await client.updateEndpoint(id, token, { selfuse: true });
  return { id, token };
}

/** A message from chat_b: the relay delivers it to chat_a's webhook, and the record is idle again once it has. */
const postFromChatB = (client: ChatbridgeClient, id: string, token: string, content: string) =>
  client.updateEndpoint(id, token, { sender: 'chat_b', sender_channel: 'b-0000-chan', message_content: content, trigger: true });

describe('relay: webhook fairness between tenants', () => {
  it("when 66 endpoints' chat_a webhooks hang, then a healthy endpoint's chat_a message is delivered within 2 s", async () => {
    const { receiver, server, client } = await start();
    const hanging = await Promise.all(
      Array.from({ length: 66 }, (_, i) => bridged(server, client, `hang-${i}`, receiver.url(`hang/${i}`))),
    );
    const healthy = await bridged(server, client, 'healthy', receiver.url('ok'));
    await Promise.all(hanging.map(({ id, token }) => postFromChatB(client, id, token, 'into the void')));
    await eventually(() => receiver.hanging.length >= 64);

    const posted = Date.now();
    await postFromChatB(client, healthy.id, healthy.token, 'hello');
    await eventually(async () => (await client.getEndpoint(healthy.id, healthy.token)).meta.trigger === false, 10_000);
    expect(Date.now() - posted).toBeLessThan(2_000);
  });

  it('when one endpoint keeps posting to its bridges while their chat_a webhooks hang, then it holds at most 2 of the slots and another endpoint is delivered at once', async () => {
    const { receiver, server, client } = await start({ relay: { maxInFlight: 3 } });
    // Three bridges, each with a chat_a webhook that hangs: a webhook has one attempt under way at a
    // time (its oldest message), so only several webhooks could take several slots.
    const noisy = { id: 'noisy', token: await server.provision('noisy') };
    for (const i of [0, 1, 2]) {
      await client.updateEndpoint(noisy.id, noisy.token, {
        channel_chat_a: `a-000${i}-chan`,
        webhook_chat_a: receiver.url(`hang/noisy-${i}`),
        channel_chat_b: `b-000${i}-chan`,
      });
    }
    await client.updateEndpoint(noisy.id, noisy.token, { selfuse: true });
    const other = await bridged(server, client, 'other', receiver.url('ok'));
    // Bridges 0, 1, 2, 0, 1: none replaces another; each waits for its webhook or for a slot.
    for (let i = 0; i < 5; i++) {
      await client.updateEndpoint(noisy.id, noisy.token, {
        sender: 'chat_b',
        sender_channel: `b-000${i % 3}-chan`,
        message_content: `message ${i}`,
        trigger: true,
      });
      await eventually(() => receiver.hanging.length >= Math.min(i + 1, 2));
    }

    const posted = Date.now();
    await postFromChatB(client, other.id, other.token, 'hello');
    await eventually(async () => (await client.getEndpoint(other.id, other.token)).meta.trigger === false, 10_000);
    expect(Date.now() - posted).toBeLessThan(2_000);
    expect(receiver.hanging.map((path) => path.split('/')[2])).toEqual(['noisy-0', 'noisy-1']);
    // Every noisy message is still queued: the two under way, bridge 2's waiting for a slot, and the
    // two after them on their own webhooks.
    expect(await server.store.deliveries.count()).toBe(5);
  });
});
