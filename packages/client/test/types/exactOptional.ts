// Compiled by `pnpm typecheck` with `exactOptionalPropertyTypes` (./tsconfig.json), as strict consumers
// compile: the README's calls with values that may be unset must compile, and parameters the server
// ignores whatever their value must not.
import { createChatbridgeClient, type UpdateEndpointParams } from '../../src/index.ts';

const adminToken: string | undefined = process.env.CHATBRIDGE_ADMIN_TOKEN;
const client = createChatbridgeClient({ baseUrl: 'http://127.0.0.1:8080', adminToken, headers: undefined });

export async function pages(): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listEndpoints({ limit: 100, cursor });
    ids.push(...page.ids);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return ids;
}

export async function post(token: string, text: string | undefined, signal?: AbortSignal): Promise<void> {
  const params: UpdateEndpointParams = { message_content: text, sender: 'chat_c', trigger: true };
  await client.updateEndpoint('my-community', token, params, { signal });
  for await (const event of client.streamEndpointEvents('my-community', token, { lastEventId: undefined, signal })) void event;
  await client.updateEndpoint('my-community', token, {
    // @ts-expect-error chat_c has no webhooks: the server ignores every value
    webhook_chat_c: 'https://chat-c.example.com/hooks/1/abcdefghijklmnopqrstuvwxyz0123456789',
  });
  await client.updateEndpoint('my-community', token, {
    // @ts-expect-error chat_d has no webhooks either
    webhook_chat_d: 'https://chat-d.example.com/hooks/1/abcdefghijklmnopqrstuvwxyz0123456789',
  });
}
