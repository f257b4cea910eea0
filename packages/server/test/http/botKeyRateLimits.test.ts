// Rate limits with bot keys: a key has its own budget on each endpoint, and a failed bot-key
// authentication counts like a failed token.
import { afterEach, describe, expect, it } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { raw } from './harness.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

describe('bot keys and the rate limits', () => {
  it('when a bot key uses up its budget on one endpoint, then 429 there, while another key, the token, and the same key on another endpoint still get 200', async () => {
    server = await startTestServer({ rateLimits: { authFailuresPerMinute: 0, perEndpointPerSecond: 3 } });
    const token = await server.provision('busy');
    const quiet = await server.provision('quiet');
    const admin = createChatbridgeClient({ baseUrl: server.url, adminToken: server.adminToken });
    // chat_b and chat_c take part in both: their keys act there.
    await admin.updateEndpoint('busy', token, { channel_chat_b: '22222', channel_chat_c: '33333' });
    await admin.updateEndpoint('quiet', quiet, { channel_chat_b: '22222' });
    const { key } = await admin.createBot('limited-bot', 'chat_b');
    const other = await admin.createBot('other-bot', 'chat_c');
    // 3 per second plus a burst of 3: refused well before 30 requests, however slowly they go out.
    let status = 200;
    for (let i = 0; i < 30 && status !== 429; i++) status = (await raw(`${server.url}/busy`, bearer(key))).status;
    expect(status).toBe(429);
    expect((await raw(`${server.url}/busy`, bearer(other.key))).status).toBe(200);
    expect((await raw(`${server.url}/busy?token=${token}`)).status).toBe(200);
    expect((await raw(`${server.url}/quiet`, bearer(key))).status).toBe(200);
  });

  it('when a wrong bot key fails against an endpoint too often, then that key gets 429 there from that address, and the token is still served', async () => {
    server = await startTestServer({ rateLimits: { authFailuresPerMinute: 3, perEndpointPerSecond: 0 } });
    const token = await server.provision('guarded');
    const wrong = `cbk_${'w'.repeat(72)}`;
    for (let i = 0; i < 3; i++) expect((await raw(`${server.url}/guarded`, bearer(wrong))).status).toBe(401);
    expect((await raw(`${server.url}/guarded`, bearer(wrong))).status).toBe(429);
    expect((await raw(`${server.url}/guarded?token=${token}`)).status).toBe(200);
  });
});
