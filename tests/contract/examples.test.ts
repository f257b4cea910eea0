// The spec's examples, replayed in order against a fresh server as an example-driven tool would send
// them, make a session that succeeds: the admin example creates the endpoint, the update example
// posts a message, markRead's example names that message's number, and so on. Every operation of the
// spec is in the sequence, so a new operation must bring examples that work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@chatbridge/server/testing';
import { exampleRequest, operationIds, sendExample } from './examples.ts';
import { capture, mediaTypeOf, violations } from './spec.ts';

/** The order a session takes; the endpoint is deleted last. */
const SEQUENCE = [
  'getHomePage',
  'getDocs',
  'getLiveness',
  'getReadiness',
  'createEndpoint',
  'createBot',
  'listBots',
  'rotateBotKey',
  'getEndpoint',
  'updateEndpoint',
  'markRead',
  'getMessage',
  'editMessage',
  'deleteMessage',
  'listMessages',
  'lookupEndpoints',
  'removeFromEndpoint',
  'streamEndpointEvents',
  'streamAllEvents',
  'listEndpoints',
  'getMetrics',
  'rotateEndpointToken',
  'deleteBot',
  'deleteEndpoint',
];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Reads an event stream up to the end of its first event, then hangs up. */
async function firstEvent(response: Response, controller: AbortController): Promise<string> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!/\n\n[\s\S]*\n\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  controller.abort();
  return text;
}

describe("the spec's examples replayed against a fresh server", () => {
  it('when the sequence is compared with the spec, then it holds every operation once', () => {
    expect([...SEQUENCE].sort()).toEqual(operationIds().sort());
  });

  it('when every operation is called with its examples, in order, then each answers 2xx with a body its schema accepts', async () => {
    let token: string | undefined;
    const answers: string[] = [];
    for (const operationId of SEQUENCE) {
      const request = exampleRequest(operationId, { token, adminToken: server.adminToken });
      const controller = new AbortController();
      const response = await sendExample(server.url, request, {}, controller.signal);
      const answer =
        mediaTypeOf(response.headers.get('content-type')) === 'text/event-stream'
          ? {
              status: response.status,
              mediaType: 'text/event-stream',
              body: await firstEvent(response, controller),
              headers: response.headers,
            }
          : await capture(response);
      if (operationId === 'createEndpoint' || operationId === 'rotateEndpointToken') token = (answer.body as { token?: string }).token;
      const problems = answer.status < 300 ? violations(operationId, answer) : [JSON.stringify(answer.body)];
      answers.push(`${operationId} ${answer.status}${problems.length ? `: ${problems.join('; ')}` : ''}`);
    }
    expect(answers).toEqual(SEQUENCE.map((operationId) => expect.stringMatching(new RegExp(`^${operationId} 2\\d\\d$`))));
  });

  it("when the update example is replayed, then the message is pending and markRead's example names its number", async () => {
    const token = await server.provision('examples-number');
    const update = exampleRequest('updateEndpoint', { token });
    const pending = await sendExample(server.url, { ...update, path: '/update/examples-number' });
    expect(pending.status).toBe(200);
    const number = pending.headers.get('chatbridge-message-number');
    const markRead = exampleRequest('markRead', { token });
    expect(markRead.query).toContainEqual(['message_number', number]);
  });
});
