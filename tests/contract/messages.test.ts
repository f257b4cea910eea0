// Message IDs, edits, deletes and native replies (getMessage, editMessage, deleteMessage, and the
// message_id / message_reply_to / markRead message_id parameters), through the typed client:
// - against the Prism mock: it answers every new operation and parameter with the spec's examples, and
//   what the client resolves is what the spec declares;
// - against the real server: the rules the spec states that a schema cannot (one ID per platform and
//   message, unique per endpoint and platform; rights by platform; deleted and edit-limited messages;
//   edit and delete events naming every platform's ID; native replies).
// Every answer, of either target, is checked against the spec: status, media type, body and headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatbridgeClient, type EndpointEvent, type LoggedMessage, type MessageLogEvent } from '@chatbridge/client';
import { failure } from '../../packages/server/test/http/harness.ts';
import { type Exchange, operationOf, recording } from './exchanges.ts';
import { capture, eventData, headerViolations, violations } from './spec.ts';
import { MOCK_TOKEN, type ServerTarget, startMockTarget, startServerTarget, type Target } from './targets.ts';

/** Every answer of `exchanges` as the spec declares it: no body, media type or header off the spec. */
function offSpec(exchanges: Exchange[]): string[] {
  return exchanges.flatMap((x) => [
    ...violations(operationOf(x), x).map((v) => `${x.method} ${x.path} ${x.status}: ${v}`),
    ...headerViolations(operationOf(x), x).map((v) => `${x.method} ${x.path}: ${v}`),
  ]);
}

const PROBLEM = 'https://chatbridge.dev/problems#';

describe('the mock: message IDs, edits and deletes', () => {
  let mock: Target;
  const exchanges: Exchange[] = [];
  const client = () => createChatbridgeClient({ baseUrl: mock.url, fetch: recording(exchanges) });
  const ID = '912345678901234567';

  beforeAll(async () => {
    mock = await startMockTarget();
  });
  afterAll(() => mock?.close());

  it('when a message is found by a platform and its ID, then the mock answers the found example: every platform ID', async () => {
    const found = await client().getMessage(ID, MOCK_TOKEN, { platform: 'chat_a', messageId: 'a-1' });
    expect(found).toMatchObject({ number: 7, ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' }, edits: 0, deleted: false });
    expect((await client().getMessage(ID, MOCK_TOKEN, { number: 7 })).number).toBe(7);
  });

  it('when a message is edited, then the mock answers the edited example', async () => {
    const edited = await client().editMessage(
      ID,
      MOCK_TOKEN,
      { platform: 'chat_c', messageId: 'c-1' },
      { message_content: 'Hello (edited)' },
    );
    expect(edited).toMatchObject({ edits: 1, deleted: false, edited_at: expect.any(String) });
  });

  it('when a message is deleted, then the mock answers the deleted example: no text, IDs kept', async () => {
    const deleted: LoggedMessage = await client().deleteMessage(ID, MOCK_TOKEN, { number: 7 });
    expect(deleted).toMatchObject({ deleted: true, message: { content: null }, ids: { chat_c: 'c-1' } });
  });

  it('when an update carries message_id and message_reply_to, and markRead a message_id, then the mock accepts them (200)', async () => {
    await client().updateEndpoint(ID, MOCK_TOKEN, {
      sender: 'chat_c',
      message_content: 'a reply',
      message_id: 'c-2',
      message_reply: true,
      message_reply_to: 'c-1',
      trigger: true,
    });
    await client().markRead(ID, MOCK_TOKEN, 'chat_a', { messageNumber: 7, messageId: 'a-2' });
  });

  it('when a message ID breaks its pattern (a space) or a number is 0, then the mock answers 400 as the server would', async () => {
    const space = await failure(client().getMessage(ID, MOCK_TOKEN, { platform: 'chat_c', messageId: 'c 1' }));
    expect(space.status).toBe(400);
    const zero = await failure(client().deleteMessage(ID, MOCK_TOKEN, { number: 0 }));
    expect(zero.status).toBe(400);
    const long = await failure(client().updateEndpoint(ID, MOCK_TOKEN, { sender: 'chat_c', message_id: 'x'.repeat(101), trigger: true }));
    expect(long.status).toBe(400);
  });

  it.each([
    ['getMessage', 404, 'noSuchMessage', 'no-such-message'],
    ['editMessage', 404, 'noSuchMessage', 'no-such-message'],
    ['deleteMessage', 404, 'noSuchMessage', 'no-such-message'],
    ['editMessage', 409, 'messageDeleted', 'message-deleted'],
    ['editMessage', 409, 'editLimit', 'edit-limit'],
    ['updateEndpoint', 409, 'duplicateMessageId', 'duplicate-message-id'],
    ['markRead', 409, 'duplicateMessageId', 'duplicate-message-id'],
  ] as const)('when %s is asked for %i (%s), then the client rejects with the %s problem', async (operationId, status, example, kind) => {
    const prefer = createChatbridgeClient({
      baseUrl: mock.url,
      fetch: recording(exchanges),
      headers: { prefer: `code=${status}, example=${example}` },
    });
    const calls: Record<typeof operationId, () => Promise<unknown>> = {
      getMessage: () => prefer.getMessage(ID, MOCK_TOKEN, { number: 7 }),
      editMessage: () => prefer.editMessage(ID, MOCK_TOKEN, { number: 7 }, { message_content: 'x' }),
      deleteMessage: () => prefer.deleteMessage(ID, MOCK_TOKEN, { number: 7 }),
      updateEndpoint: () => prefer.updateEndpoint(ID, MOCK_TOKEN, { sender: 'chat_c', message_id: 'c-1', trigger: true }),
      markRead: () => prefer.markRead(ID, MOCK_TOKEN, 'chat_a', { messageNumber: 7, messageId: 'a-1' }),
    };
    const error = await failure(calls[operationId]());
    expect([error.operationId, error.status, error.problem.type]).toEqual([operationId, status, `${PROBLEM}${kind}`]);
  });

  it('when the example stream is read with messageEvents, then its edit and delete events come typed and match the spec', async () => {
    const events: (EndpointEvent | MessageLogEvent)[] = [];
    for await (const event of client().streamEndpointEvents(ID, MOCK_TOKEN, { messageEvents: true, reconnect: false })) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['record', 'record', 'edit', 'delete']);
    const [edit, remove] = events.slice(2);
    expect(edit).toMatchObject({ id: 5, type: 'edit', number: 1, ids: { chat_c: 'c-1' }, edits: 1 });
    expect(remove).toMatchObject({ id: 6, type: 'delete', number: 1, ids: { chat_c: 'c-1' } });

    const records: EndpointEvent[] = [];
    for await (const event of client().streamEndpointEvents(ID, MOCK_TOKEN, { reconnect: false })) records.push(event);
    expect(records.map((e) => e.type)).toEqual(['record', 'record']);
  });

  it('when the example stream of all changes is read with messageEvents, then its edit and delete name their endpoint and version', async () => {
    const all = createChatbridgeClient({ baseUrl: mock.url, adminToken: 'any-bearer-will-do' });
    const types: string[] = [];
    for await (const event of all.streamAllEvents({ messageEvents: true, reconnect: false })) {
      types.push(event.type);
      if (event.type === 'edit' || event.type === 'delete') expect(event).toMatchObject({ endpoint: '1234567890', number: 3 });
    }
    expect(types).toEqual(['reset', 'change', 'edit', 'delete']);
  });

  it('when the example streams are checked against the spec, then every event of them is valid data', async () => {
    for (const [path, operationId, headers] of [
      [`/events/${ID}?token=${MOCK_TOKEN}`, 'streamEndpointEvents', {}],
      ['/events', 'streamAllEvents', { authorization: 'Bearer any-bearer-will-do' }],
    ] as const) {
      const response = await capture(await fetch(`${mock.url}${path}`, { headers }));
      expect(eventData(String(response.body)).length).toBeGreaterThanOrEqual(4);
      expect(violations(operationId, response)).toEqual([]);
    }
  });

  it('when every answer of this block is compared with the spec, then none is off it, headers included', () => {
    expect(exchanges.length).toBeGreaterThan(15);
    // Prism names what it refused in its own `sl-violations` header on the 400s it answers itself.
    expect(offSpec(exchanges).filter((v) => !/ 400: sl-violations is sent/.test(v))).toEqual([]);
  });
});

// Needs the server's implementation of issue 44 (the lead's branch): until it lands, these fail.
describe('the server: message IDs, edits, deletes and native replies', () => {
  let target: ServerTarget;
  const exchanges: Exchange[] = [];
  const EP = 'contract-messages';
  let token = '';
  const keys: Record<'chat_b' | 'chat_c' | 'chat_d', string> = { chat_b: '', chat_c: '', chat_d: '' };

  const admin = () => createChatbridgeClient({ baseUrl: target.url, adminToken: target.adminToken, fetch: recording(exchanges) });
  const bot = (platform: keyof typeof keys) =>
    createChatbridgeClient({ baseUrl: target.url, botKey: keys[platform], fetch: recording(exchanges) });
  let number = 0;

  beforeAll(async () => {
    target = await startServerTarget({
      rateLimits: { authFailuresPerMinute: 1_000, authFailuresPerAddressPerMinute: 10_000, perEndpointPerSecond: 1_000 },
    });
    token = await target.server.provision(EP);
    // chat_a, chat_c and chat_d take part; chat_b does not (its key must not see the endpoint).
    await admin().updateEndpoint(EP, token, {
      channel_chat_a: '912345678901234500',
      channel_chat_c: 'channel-c-1',
      channel_chat_d: 'channel-d-1',
    });
    for (const platform of ['chat_b', 'chat_c', 'chat_d'] as const)
      keys[platform] = (await admin().createBot(`msg-${platform}`, platform)).key;
  });
  afterAll(() => target?.close());

  it('when chat_c sends a message with its ID c-1, then it is accepted; sending c-1 again is 409 duplicate-message-id and changes nothing', async () => {
    const record = await bot('chat_c').updateEndpoint(EP, {
      sender: 'chat_c',
      sender_channel: 'channel-c-1',
      message_author_name: 'Ada',
      message_content: 'Hello from chat_c',
      message_id: 'c-1',
      trigger: true,
    });
    expect(record.meta.message.content).toBe('Hello from chat_c');
    const page = await admin().listMessages(EP, token);
    number = page.newest;
    expect(page.messages.at(-1)).toMatchObject({ number, ids: { chat_c: 'c-1' }, edits: 0, edited_at: null, deleted: false });

    const again = await failure(
      bot('chat_c').updateEndpoint(EP, {
        sender: 'chat_c',
        sender_channel: 'channel-c-1',
        message_content: 'again',
        message_id: 'c-1',
        trigger: true,
      }),
    );
    expect([again.status, again.problem.type]).toEqual([409, `${PROBLEM}duplicate-message-id`]);
    expect((await admin().listMessages(EP, token)).newest).toBe(number);
  });

  it('when message_id comes without trigger=true and sender, then 400 naming message_id', async () => {
    const error = await failure(admin().updateEndpoint(EP, token, { message_id: 'c-9' }));
    expect([error.status, error.problem.errors?.map((e) => e.parameter)]).toEqual([400, ['message_id']]);
  });

  it("when chat_a and chat_d report their copies' IDs with markRead, then getMessage by any ID answers all three", async () => {
    await admin().markRead(EP, token, 'chat_a', { messageNumber: number, messageId: 'a-1' });
    await bot('chat_d').markRead(EP, { messageNumber: number, messageId: 'd-1' });
    const found = await admin().getMessage(EP, token, { platform: 'chat_a', messageId: 'a-1' });
    expect(found).toMatchObject({ number, sender: 'chat_c', ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' } });
    expect(await bot('chat_d').getMessage(EP, { platform: 'chat_c', messageId: 'c-1' })).toEqual(found);
    expect(await bot('chat_c').getMessage(EP, { number })).toEqual(found);
  });

  it('when markRead has message_id without message_number, then 400 naming message_number', async () => {
    const error = await failure(admin().markRead(EP, token, 'chat_a', { messageId: 'a-9' }));
    expect([error.status, error.problem.errors?.map((e) => e.parameter)]).toEqual([400, ['message_number']]);
  });

  it('when a message is named both ways, or half of one, then 400', async () => {
    for (const named of [{ number, platform: 'chat_c', messageId: 'c-1' }, { platform: 'chat_c' }, { messageId: 'c-1' }, {}]) {
      const error = await failure(admin().getMessage(EP, token, named as { number: number }));
      expect(error.status).toBe(400);
    }
  });

  it('when a key of a platform that takes no part looks for the message, then 401, as a wrong token', async () => {
    const error = await failure(bot('chat_b').getMessage(EP, { platform: 'chat_c', messageId: 'c-1' }));
    expect([error.status, error.problem.type]).toEqual([401, `${PROBLEM}unauthorized`]);
  });

  it('when an ID no kept message has, or a number never issued, is named, then 404 no-such-message', async () => {
    for (const named of [{ platform: 'chat_a', messageId: 'c-1' } as const, { number: number + 100 }]) {
      const error = await failure(admin().getMessage(EP, token, named));
      expect([error.status, error.problem.type]).toEqual([404, `${PROBLEM}no-such-message`]);
    }
    const edit = await failure(admin().editMessage(EP, token, { platform: 'chat_d', messageId: 'nope' }, { message_content: 'x' }));
    expect(edit.status).toBe(404);
  });

  it("when chat_d's key edits or deletes chat_c's message, then 403 and nothing changes", async () => {
    const before = await admin().getMessage(EP, token, { number });
    const edit = await failure(bot('chat_d').editMessage(EP, { platform: 'chat_c', messageId: 'c-1' }, { message_content: 'mine' }));
    expect([edit.status, edit.problem.type]).toEqual([403, `${PROBLEM}forbidden`]);
    expect(edit.problem.errors?.map((e) => e.parameter)).toEqual(['platform']);
    const remove = await failure(bot('chat_d').deleteMessage(EP, { number }));
    expect(remove.problem.errors?.map((e) => e.parameter)).toEqual(['number']);
    expect(await admin().getMessage(EP, token, { number })).toEqual(before);
  });

  it('when an edit carries none of content, attachments and embed, then 400 naming message_content', async () => {
    const error = await failure(bot('chat_c').editMessage(EP, { number }, {}));
    expect([error.status, error.problem.errors?.map((e) => e.parameter)]).toEqual([400, ['message_content']]);
  });

  it("when chat_c edits its message by c-1, then the log keeps the new text and chat_d's stream has an edit event naming d-1", async () => {
    const version = await currentVersion();
    const edited = await bot('chat_c').editMessage(EP, { platform: 'chat_c', messageId: 'c-1' }, { message_content: 'Hello (edited)' });
    expect(edited).toMatchObject({
      number,
      edits: 1,
      edited_at: expect.any(String),
      message: { content: 'Hello (edited)', author: { name: 'Ada' } },
    });
    const event = await nextMessageEvent(version);
    expect(event).toMatchObject({ type: 'edit', id: version + 1, number, ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' }, edits: 1 });
    expect(event.type === 'edit' && event.message.content).toBe('Hello (edited)');
  });

  it('when chat_d replies to d-1, then the reply names the replied-to message and its ID on every platform', async () => {
    await bot('chat_d').updateEndpoint(EP, {
      sender: 'chat_d',
      sender_channel: 'channel-d-1',
      message_content: 'Hi Ada!',
      message_reply: true,
      message_reply_author: 'Ada Lovelace',
      message_reply_message: 'Hello (edited)',
      message_reply_to: 'd-1',
      message_id: 'd-2',
      trigger: true,
    });
    const reply = (await admin().listMessages(EP, token)).messages.at(-1)!;
    expect(reply.message.reply).toEqual({
      author: 'Ada Lovelace',
      message: 'Hello (edited)',
      number,
      ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' },
    });
  });

  it('when a reply names an ID no kept message has, then it is accepted as an ordinary message, without number and ids', async () => {
    await bot('chat_d').updateEndpoint(EP, {
      sender: 'chat_d',
      sender_channel: 'channel-d-1',
      message_content: 'to nothing',
      message_reply: true,
      message_reply_to: 'd-404',
      trigger: true,
    });
    const message = (await admin().listMessages(EP, token)).messages.at(-1)!;
    expect(message.message.reply).toEqual({ author: null, message: null });
  });

  it('when chat_c deletes its message, then it is deleted without its text, a delete event names every ID, and deleting again changes nothing', async () => {
    const version = await currentVersion();
    const deleted = await bot('chat_c').deleteMessage(EP, { platform: 'chat_c', messageId: 'c-1' });
    expect(deleted).toMatchObject({
      number,
      deleted: true,
      message: { content: null, author: { name: null } },
      ids: { chat_c: 'c-1', chat_d: 'd-1' },
    });
    const event = await nextMessageEvent(version);
    expect(event).toMatchObject({ type: 'delete', id: version + 1, number, ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' } });

    const again = await bot('chat_c').deleteMessage(EP, { number });
    expect(again).toEqual(deleted);
    expect(await currentVersion()).toBe(version + 1); // no change, no event
  });

  it('when a deleted message is edited, then 409 message-deleted', async () => {
    const error = await failure(admin().editMessage(EP, token, { number }, { message_content: 'back' }));
    expect([error.status, error.problem.type]).toEqual([409, `${PROBLEM}message-deleted`]);
  });

  it('when a message has been edited 100 times, then the 101st edit is 409 edit-limit', async () => {
    await bot('chat_c').updateEndpoint(EP, {
      sender: 'chat_c',
      sender_channel: 'channel-c-1',
      message_content: 'v0',
      message_id: 'c-limit',
      trigger: true,
    });
    const named = { platform: 'chat_c', messageId: 'c-limit' } as const;
    for (let n = 1; n <= 100; n++) expect((await bot('chat_c').editMessage(EP, named, { message_content: `v${n}` })).edits).toBe(n);
    const error = await failure(bot('chat_c').editMessage(EP, named, { message_content: 'v101' }));
    expect([error.status, error.problem.type]).toEqual([409, `${PROBLEM}edit-limit`]);
  });

  it('when every answer of this block is compared with the spec, then none is off it, headers included', () => {
    expect(new Set(exchanges.map((x) => x.status))).toEqual(new Set([200, 201, 400, 401, 403, 404, 409]));
    // The 100 edits are left out of the comparison's output, not of the check.
    expect(offSpec(exchanges)).toEqual([]);
  });

  /** The endpoint's version now: the ID of the first event of a fresh stream. */
  async function currentVersion(): Promise<number> {
    for await (const event of admin().streamEndpointEvents(EP, token, { reconnect: false })) return event.id;
    throw new Error('the stream ended without an event');
  }

  /** The first edit or delete event chat_d's stream has after `version`. */
  async function nextMessageEvent(version: number): Promise<MessageLogEvent> {
    const signal = AbortSignal.timeout(10_000);
    for await (const event of bot('chat_d').streamEndpointEvents(EP, { lastEventId: version, messageEvents: true, signal })) {
      if (event.type === 'edit' || event.type === 'delete') return event;
    }
    throw new Error('the stream ended without an edit or delete event');
  }
});
