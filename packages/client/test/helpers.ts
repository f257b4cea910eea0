// Test doubles: a fake `fetch` that records every Request and answers with canned Responses,
// plus fixtures taken from the spec's examples.
import { createChatbridgeClient, type ChatbridgeClientOptions, type EndpointRecord, type Problem } from '../src/index.ts';

export const BASE_URL = 'https://chatbridge.test';
export const ENDPOINT = '912345678901234567';
/** 71 URL-safe characters: the shortest valid endpoint token. */
export const TOKEN = `cbt_${'A1b2_-'.repeat(11)}x`;
export const ADMIN_TOKEN = 'admin-secret-token';

type Responder = (request: Request) => Response | Promise<Response>;

/** A fetch that records each Request it is given and answers with `respond`. */
export function fakeFetch(respond: Responder) {
  const requests: Request[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    requests.push(request);
    return respond(request);
  };
  return { fetch, requests };
}

/** A client wired to a fake fetch; `requests` lists what it sent. */
export function setup(respond: Responder, options: Partial<ChatbridgeClientOptions> = {}) {
  const { fetch, requests } = fakeFetch(respond);
  const client = createChatbridgeClient({ baseUrl: BASE_URL, fetch, adminToken: ADMIN_TOKEN, ...options });
  /** The only request sent; fails the test if there was not exactly one. */
  const only = (): Request => {
    if (requests.length !== 1) throw new Error(`expected exactly one request, got ${requests.length}`);
    return requests[0]!;
  };
  return { client, requests, only };
}

export function problemResponse(problem: Problem, init: ResponseInit = {}): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    ...init,
    headers: { 'content-type': 'application/problem+json', ...init.headers },
  });
}

/** The raw (still percent-encoded) query string of a request, without the leading `?`. */
export function rawQuery(request: Request): string {
  return new URL(request.url).search.slice(1);
}

export const RECORD: EndpointRecord = {
  config: {
    'allowed-ids': [],
    blacklist: ['spam', 'scam'],
    channels: { chat_a: ['912345678901234500'], chat_b: [], chat_c: [], chat_d: [] },
    isbeta: false,
    logs: { chat_a: null, chat_b: null, chat_c: null, chat_d: null },
    'self-user': false,
    webhooks: { chat_a: [], chat_b: [], chat_c: [], chat_d: [] },
  },
  meta: {
    message: {
      attachments: [],
      author: { avatar: null, id: null, name: null },
      content: null,
      embed: { description: 'None', fields: [], footer: 'None', image: 'None', thumbnail: 'None', title: 'None' },
      isReply: false,
      reply: { author: null, message: null },
    },
    read: { chat_a: false, chat_b: false, chat_c: false, chat_d: false },
    sender: null,
    'sender-channel': null,
    trigger: false,
  },
};

export const PROBLEMS = {
  validation: {
    type: 'https://chatbridge.dev/problems#validation',
    title: 'Invalid request',
    status: 400,
    detail: 'message_embed: must be a JSON object',
    message: 'message_embed: must be a JSON object',
    instance: `/update/${ENDPOINT}`,
    errors: [{ parameter: 'message_embed', in: 'query', message: 'must be a JSON object' }],
  },
  unauthorized: {
    type: 'https://chatbridge.dev/problems#unauthorized',
    title: 'Unauthorized',
    status: 401,
    detail: 'The token is missing or not valid for this endpoint.',
    message: 'The token is missing or not valid for this endpoint.',
  },
  notFound: {
    type: 'https://chatbridge.dev/problems#not-found',
    title: 'Not found',
    status: 404,
    detail: 'No endpoint has this ID.',
    message: 'No endpoint has this ID.',
  },
  conflict: {
    type: 'https://chatbridge.dev/problems#conflict',
    title: 'Conflict',
    status: 409,
    detail: 'An endpoint with this ID already exists.',
    message: 'An endpoint with this ID already exists.',
  },
} satisfies Record<string, Problem>;
