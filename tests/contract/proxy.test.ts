// Prism as a validating proxy (`prism proxy --errors`) in front of the real server: a realistic session of
// well-formed traffic goes through it with our typed client, and Prism must not report a single request
// or response violation. With --errors Prism replaces an off-spec exchange with its own problem document
// (`type` https://stoplight.io/prism/errors#..., e.g. #VIOLATIONS with status 500) and lists what it
// found in an `sl-violations` header; both are looked for in every response.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatbridgeClient, type EndpointRecord, REDACTED_WEBHOOK } from '@chatbridge/client';
import { failure } from '../../packages/server/test/http/harness.ts';
import { type Exchange, operationOf, recording } from './exchanges.ts';
import { capture, type CapturedResponse, headerViolations, violations } from './spec.ts';
import { ENDPOINT_ID, MOCK_TOKEN, type PrismProcess, type ServerTarget, startPrismProxy, startServerTarget } from './targets.ts';

const PRISM_ERROR_TYPE = 'https://stoplight.io/prism/errors#';

/** Why `response` is Prism's own error rather than the upstream's answer, or undefined if it is not. */
function prismReport(response: CapturedResponse): string | undefined {
  const body = response.body as { type?: unknown; validation?: unknown; detail?: unknown } | undefined;
  const header = response.headers.get('sl-violations');
  if (typeof body?.type === 'string' && body.type.startsWith(PRISM_ERROR_TYPE)) {
    return `${response.status} ${body.type}: ${JSON.stringify(body.validation ?? body.detail)}`;
  }
  return header ? `sl-violations: ${header}` : undefined;
}

describe('prism proxy --errors in front of the real server', () => {
  let server: ServerTarget | undefined;
  let proxy: PrismProcess | undefined;
  const exchanges: Exchange[] = [];

  beforeAll(async () => {
    server = await startServerTarget();
    proxy = await startPrismProxy(server.url);
  });

  afterAll(async () => {
    await proxy?.close(); // first, so that no proxied connection keeps the server open
    await server?.close();
  });

  // Every response the client receives is recorded (a clone is read; the client reads the original).
  const client = () =>
    createChatbridgeClient({
      baseUrl: proxy!.url,
      adminToken: server!.adminToken,
      fetch: recording(exchanges),
    });

  const ID = '912345678901234567';
  const WEBHOOK_A = (n: number) => `https://chat-a.example.com/api/webhooks/12345678901234567${n}/abcdefghijklmnopqrstuvwxyz`;
  const WEBHOOK_B = 'https://chat-b.example.com/hooks/channel-b-1/0123456789abcdef0123456789abcdef';
  const CONTENT = 'Hello from chat_c & friends? 100% #1, a+b = "c" 🎉 ünïcödé';
  let token = '';
  let last: EndpointRecord;

  it('when the probes are called through the proxy, then live and ready answer 200', async () => {
    expect(await client().getLiveness()).toEqual({ status: 'ok', version: '1.0.0' });
    expect((await client().getReadiness()).ready).toBe(true);
  });

  it('when an admin creates an endpoint, then 201 with a token, and creating it again is 409', async () => {
    const issued = await client().createEndpoint(ID);
    expect(issued.id).toBe(ID);
    token = issued.token;
    const conflict = await failure(client().createEndpoint(ID));
    expect([conflict.status, conflict.problem.type]).toEqual([409, 'https://chatbridge.dev/problems#conflict']);
  });

  it('when a bridge is configured with many parameters at once, then 200 with all of them applied', async () => {
    last = await client().updateEndpoint(ID, token, {
      channel_chat_a: '912345678901234500',
      webhook_chat_a: WEBHOOK_A(0),
      channel_chat_b: 'channel-b-1',
      webhook_chat_b: WEBHOOK_B,
      channel_chat_c: 'channel-c-1234',
      log_chat_a: '912345678901234599',
      log_chat_b: 'log-channel-b',
      log_chat_c: 'log-channel-c',
      blacklist: 'spam, scam,phishing',
      allowed_ids: '912345678901234567,812345678901234567',
      selfuse: true,
      beta: false,
    });
    expect(last.config).toMatchObject({
      channels: { chat_a: ['912345678901234500'], chat_b: ['channel-b-1'], chat_c: ['channel-c-1234'], chat_d: [] },
      webhooks: { chat_a: [WEBHOOK_A(0)], chat_b: [WEBHOOK_B], chat_c: [], chat_d: [] },
      logs: { chat_a: '912345678901234599', chat_b: 'log-channel-b', chat_c: 'log-channel-c', chat_d: null },
      blacklist: ['spam', 'scam', 'phishing'],
      'allowed-ids': ['912345678901234567', '812345678901234567'],
      'self-user': true,
      isbeta: false,
    });
  });

  it('when a second bridge is appended and then overwritten at index 1, then position 0 is untouched', async () => {
    await client().updateEndpoint(ID, token, { channel_chat_a: '912345678901234501', webhook_chat_a: WEBHOOK_A(1) });
    last = await client().updateEndpoint(ID, token, { index: 1, channel_chat_a: '912345678901234502', webhook_chat_a: WEBHOOK_A(2) });
    expect(last.config.channels.chat_a).toEqual(['912345678901234500', '912345678901234502']);
    expect(last.config.webhooks.chat_a).toEqual([WEBHOOK_A(0), WEBHOOK_A(2)]);
  });

  it('when blacklist words are sent comma-separated, then known words (any case) are skipped', async () => {
    last = await client().updateEndpoint(ID, token, { blacklist: 'SPAM, eggs ,,' });
    expect(last.config.blacklist).toEqual(['spam', 'scam', 'phishing', 'eggs']);
  });

  it('when a message is relayed with sender and trigger, then 200 with the message pending for the others', async () => {
    last = await client().updateEndpoint(ID, token, {
      message_author_name: 'Ada',
      message_author_avatar: 'https://cdn.chat-c.example.com/avatars/123456789/abcdef0123456789.png',
      message_author_id: 'user-123456',
      message_content: CONTENT,
      message_attachments: 'https://cdn.chat-c.example.com/files/a.png,https://cdn.chat-c.example.com/files/b.png',
      message_embed: JSON.stringify({ title: 'Release', fields: [{ name: 'Version', value: '1.0' }] }),
      message_reply: true,
      message_reply_message: 'The original message',
      message_reply_author: 'Grace Hopper',
      sender: 'chat_c',
      sender_channel: 'channel-c-1234',
      trigger: true,
    });
    expect(last.meta).toMatchObject({
      sender: 'chat_c',
      'sender-channel': 'channel-c-1234',
      trigger: true,
      // chat_c sent it; chat_d has no channels; chat_a and chat_b still have to read it.
      read: { chat_a: false, chat_b: false, chat_c: true, chat_d: true },
      message: {
        content: CONTENT,
        attachments: ['https://cdn.chat-c.example.com/files/a.png', 'https://cdn.chat-c.example.com/files/b.png'],
        author: { name: 'Ada', id: 'user-123456' },
        embed: { title: 'Release', description: 'None', fields: [{ name: 'Version', value: '1.0', inline: false }] },
        isReply: true,
        reply: { message: 'The original message', author: 'Grace Hopper' },
      },
    });
  });

  it('when only_check is sent with other parameters, then 200 and nothing changes; a read returns the same', async () => {
    expect(await client().updateEndpoint(ID, token, { only_check: true, message_content: 'ignored', sender: 'chat_a' })).toEqual(last);
    expect(await client().getEndpoint(ID, token)).toEqual(last);
  });

  it('when the other platforms mark the message read, then 200; after the last one the record is back to idle', async () => {
    const afterA = await client().markRead(ID, token, 'chat_a');
    expect(afterA.meta.read).toMatchObject({ chat_a: true, chat_b: false, chat_c: true });
    expect(afterA.meta.trigger).toBe(true);
    last = await client().markRead(ID, token, 'chat_b');
    expect(last.meta).toMatchObject({ trigger: false, sender: null, message: { content: null, attachments: [] } });
    expect(last.config).toEqual(afterA.config);
  });

  it("when a message with its ID is posted, found by a copy's ID, edited and deleted, then every answer passes the proxy", async () => {
    await client().updateEndpoint(ID, token, {
      sender: 'chat_c',
      sender_channel: 'channel-c-1234',
      message_content: CONTENT,
      message_id: 'c-1',
      trigger: true,
    });
    const { newest } = await client().listMessages(ID, token);
    await client().markRead(ID, token, 'chat_a', { messageNumber: newest, messageId: '912345678901234001' });
    const found = await client().getMessage(ID, token, { platform: 'chat_a', messageId: '912345678901234001' });
    expect(found).toMatchObject({ number: newest, ids: { chat_a: '912345678901234001', chat_c: 'c-1' } });
    const edited = await client().editMessage(
      ID,
      token,
      { platform: 'chat_c', messageId: 'c-1' },
      { message_content: `${CONTENT} (edited)` },
    );
    expect(edited).toMatchObject({ edits: 1, message: { content: `${CONTENT} (edited)` } });
    expect(await client().deleteMessage(ID, token, { number: newest })).toMatchObject({ deleted: true, message: { content: null } });
    const gone = await failure(client().getMessage(ID, token, { platform: 'chat_c', messageId: 'c-404' }));
    expect([gone.status, gone.problem.type]).toEqual([404, 'https://chatbridge.dev/problems#no-such-message']);
    // The deleted message's copy for chat_b was given up: the endpoint is idle again.
    last = await client().getEndpoint(ID, token);
    expect(last.meta.trigger).toBe(false);
  });

  it('when a bot looks up a bridged channel and removes a word, then lookup names the endpoint and bridge, and the word is gone', async () => {
    expect(await client().lookup('chat_a', '912345678901234502')).toEqual({ matches: [{ endpoint: ID, bridge: 1 }], truncated: false });
    last = await client().remove(ID, token, { blacklist: 'EGGS' });
    expect(last.config.blacklist).toEqual(['spam', 'scam', 'phishing']);
  });

  it('when metrics are scraped through the proxy, then 200 text/plain with no violation reported', async () => {
    const response = await fetch(`${proxy!.url}/-/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(response.headers.get('sl-violations')).toBeNull();
    expect(await response.text()).toContain('chatbridge_http_requests_total');
  });

  // Each of these passes schema validation (so Prism forwards it) and is refused by a rule of the server.
  it.each([
    ['message_embed is a JSON array', { message_embed: '[1]' }],
    ['index is beyond the list', { index: 5, channel_chat_a: '912345678901234509' }],
    ['index comes with a comma list', { index: 0, blacklist: 'ham,eggs' }],
    ['index comes without a list parameter', { index: 0, selfuse: false }],
  ] as const)('when %s, then 400 from the server and nothing is applied', async (_, params) => {
    const error = await failure(client().updateEndpoint(ID, token, params));
    expect([error.status, error.problem.type]).toEqual([400, 'https://chatbridge.dev/problems#validation']);
    expect(error.problem.errors?.length).toBeGreaterThan(0);
    expect(await client().getEndpoint(ID, token)).toEqual(last);
  });

  it('when a well-formed but wrong token is sent, then 401 from the server', async () => {
    const error = await failure(client().getEndpoint(ID, MOCK_TOKEN));
    expect([error.status, error.problem.type]).toEqual([401, 'https://chatbridge.dev/problems#unauthorized']);
  });

  it('when the token is rotated, then the old one is refused (401) and the new one works', async () => {
    const rotated = await client().rotateEndpointToken(ID);
    expect(rotated.id).toBe(ID);
    expect(rotated.token).not.toBe(token);
    expect((await failure(client().getEndpoint(ID, token))).status).toBe(401);
    token = rotated.token;
    expect(await client().getEndpoint(ID, token)).toEqual(last);
  });

  it('when endpoints are listed a page of one at a time, then every ID comes once, in order', async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client().listEndpoints({ limit: 1, cursor });
      ids.push(...page.ids);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(ids).toEqual([ID, ENDPOINT_ID].sort());
  });

  it('when a bot key works the endpoint, then it acts as its platform only, and rotating and deleting it shut it out', async () => {
    const bot = await client().createBot('proxy-bot', 'chat_b');
    const botClient = () =>
      createChatbridgeClient({
        baseUrl: proxy!.url,
        botKey: bot.key,
        fetch: recording(exchanges),
      });
    // chat_b takes part here: the key acts, and sees chat_a's webhook URLs only as the redaction marker.
    const seen = {
      ...last,
      config: { ...last.config, webhooks: { ...last.config.webhooks, chat_a: last.config.webhooks.chat_a.map(() => REDACTED_WEBHOOK) } },
    };
    expect(await botClient().getEndpoint(ID)).toEqual(seen);
    const community = await failure(botClient().updateEndpoint(ID, { blacklist: 'word' }));
    expect(community.problem.errors).toEqual([expect.objectContaining({ parameter: 'blacklist' })]);
    const spoof = await failure(botClient().updateEndpoint(ID, { sender: 'chat_a', message_content: 'spoof', trigger: true }));
    expect([spoof.status, spoof.problem.type]).toEqual([403, 'https://chatbridge.dev/problems#forbidden']);
    expect(await botClient().markRead(ID)).toEqual(seen);
    expect(await client().listBots()).toEqual([{ id: 'proxy-bot', platform: 'chat_b' }]);
    const rotated = await client().rotateBotKey(bot.id);
    expect(rotated.key).not.toBe(bot.key);
    expect((await failure(botClient().getEndpoint(ID))).status).toBe(401);
    expect(await client().deleteBot(bot.id)).toBeUndefined();
    expect((await failure(client().rotateBotKey(bot.id))).status).toBe(404);
  });

  it('when the endpoint is deleted, then 204; its token is refused and deleting or rotating again is 404', async () => {
    expect(await client().deleteEndpoint(ID)).toBeUndefined();
    expect((await failure(client().getEndpoint(ID, token))).status).toBe(401);
    for (const call of [client().deleteEndpoint(ID), client().rotateEndpointToken(ID)]) {
      const error = await failure(call);
      expect([error.status, error.problem.type]).toEqual([404, 'https://chatbridge.dev/problems#not-found']);
    }
    expect((await client().getReadiness()).ready).toBe(true);
  });

  it('when the whole session went through the proxy, then Prism reported no violation and every answer is the spec, headers included', () => {
    expect(exchanges.length).toBeGreaterThan(30);
    expect(new Set(exchanges.map((x) => x.status))).toEqual(new Set([200, 201, 204, 400, 401, 403, 404, 409]));
    expect(exchanges.map(prismReport).filter(Boolean)).toEqual([]);
    const offSpec = exchanges.flatMap((x) => violations(operationOf(x), x).map((v) => `${x.method} ${x.path} ${x.status}: ${v}`));
    expect(offSpec).toEqual([]);
    const undeclared = exchanges.flatMap((x) => headerViolations(operationOf(x), x).map((v) => `${x.method} ${x.path}: ${v}`));
    expect(undeclared).toEqual([]);
  });

  it('when a request is malformed, then Prism answers it itself, and that is recognised as a Prism report', async () => {
    // Not part of the session: shows that prismReport() would catch Prism's documents at all.
    const response = await capture(await fetch(`${proxy!.url}/${ID}?token=short`));
    expect(response.status).toBe(422); // no 422 declared: Prism's own UNPROCESSABLE_ENTITY
    expect(prismReport(response)).toContain(`${PRISM_ERROR_TYPE}UNPROCESSABLE_ENTITY`);
  });
});

describe('prism proxy --errors in front of an off-spec upstream', () => {
  let upstream: Server | undefined;
  let proxy: PrismProcess | undefined;

  beforeAll(async () => {
    // Answers every request with a record that lacks `meta`, which the spec requires.
    upstream = createServer((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"config":{}}'));
    await new Promise<void>((resolve) => upstream!.listen(0, '127.0.0.1', resolve));
    proxy = await startPrismProxy(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    await proxy?.close();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve) ?? resolve(undefined));
  });

  it('when the upstream answers a body the spec forbids, then Prism replaces it with a VIOLATIONS report', async () => {
    const response = await capture(await fetch(`${proxy!.url}/${ENDPOINT_ID}?token=${MOCK_TOKEN}`));
    expect(response.status).toBe(500);
    expect(prismReport(response)).toMatch(/#VIOLATIONS: .*must have required property 'meta'/);
    expect(response.headers.get('sl-violations')).toContain("must have required property 'meta'");
  });
});
