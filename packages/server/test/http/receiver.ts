// A local webhook receiver for relay tests: records every POST and answers from a script.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { payloadViolations } from './webhookContract.ts';

export interface Received {
  path: string;
  body: Record<string, unknown>;
  idempotencyKey: string | undefined;
  at: number;
  /** How the body departs from the spec's webhook payload schema; empty when it complies. */
  violations: string[];
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Hold the response this long before answering. */
  delayMs?: number;
  /** Hold the response until release() is called. */
  hold?: boolean;
}

export interface Receiver {
  received: Received[];
  /** A webhook URL on this receiver, padded past the 50-character minimum. */
  url(name: string): string;
  /** Answers for the next requests, in order; afterwards 204. */
  script(...answers: Answer[]): void;
  /** Answers every held request now. */
  release(): void;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let answers: Answer[] = [];
  const held: (() => void)[] = [];
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const parsed = JSON.parse(body || '{}') as Record<string, unknown>;
    received.push({
      path: req.url ?? '',
      body: parsed,
      violations: payloadViolations(parsed),
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      at: Date.now(),
    });
    const answer = answers.shift() ?? { status: 204 };
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    if (answer.hold) await new Promise<void>((r) => held.push(r));
    res.writeHead(answer.status, answer.headers).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: (name) => `http://127.0.0.1:${port}/hooks/${name}/${'x'.repeat(40)}`,
    script: (...a) => {
      answers = a;
    },
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it returns a truthy value or the time runs out. */
export async function eventually<T>(check: () => Promise<T | false> | T | false, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
