// Component-test harness: a real server on port 0 over a scratch SQLite file, and our own client.
import { afterAll, beforeAll } from 'vitest';
import { createChatbridgeClient, type ChatbridgeClient, ChatbridgeError } from '@chatbridge/client';
import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing.ts';

export interface Harness {
  server: TestServer;
  client: ChatbridgeClient;
  /** Provisions a fresh endpoint with a unique ID; returns its ID and token. */
  endpoint(prefix?: string): Promise<{ id: string; token: string }>;
}

let counter = 0;

/** Starts one server for the whole file and stops it afterwards. */
export function useServer(options: TestServerOptions = {}): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    h.server = await startTestServer(options);
    h.client = createChatbridgeClient({ baseUrl: h.server.url, adminToken: h.server.adminToken });
    h.endpoint = async (prefix = 'ep') => {
      const id = `${prefix}-${++counter}`;
      return { id, token: await h.server.provision(id) };
    };
  });
  afterAll(async () => {
    await h.server.close();
  });
  return h;
}

/** Runs `call` expecting a ChatbridgeError; returns it. */
export async function failure(call: Promise<unknown>): Promise<ChatbridgeError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ChatbridgeError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** Raw HTTP for what the typed client (rightly) cannot send. */
export async function raw(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}
