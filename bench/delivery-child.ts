// The delivery scenario's processes, one role each (argv[2]), driven over IPC by bench/lib/delivery.ts:
//   hooks     the webhook receivers on 127.0.0.1: `/a...` answers 204 after ANSWER_MS; `/limited...`
//             likewise, but as chat platforms rate-limit, 5 posts per 2 s window, then 429 with
//             `Retry-After: 1` until the window ends. Each accepted post is a receipt: its path, the
//             message it carries, the time it arrived.
//   messages  sends the messages: `updateEndpoint` with trigger=true from chat_c at a fixed rate, to
//             random endpoints, and to the rate-limited endpoint at its own low rate; reports each
//             message's endpoint, the number the answer gave it (`Chatbridge-Message-Number`) and
//             the time the 200 arrived (its acceptance).
// A message's content is `bench-del <n>`, n unique in the run. Times are the machine's wall clock in
// ms (performance.timeOrigin + performance.now()), the same in every process.
import http from 'node:http';

const now = () => performance.timeOrigin + performance.now();
const MARK = /bench-del (\d+)/;
const role = process.argv[2];

/** How long a receiver takes to answer: a chat platform's webhook endpoint, roughly. */
const ANSWER_MS = 50;
/** The rate-limited receiver: posts per window, the window, and the Retry-After it answers with. */
const LIMIT = { posts: 5, windowMs: 2_000, retryAfterS: 1 };

/** [path kind, message n, arrival time] of every post a receiver took (duplicates included). */
let receipts: [string, number, number][] = [];
let refused = 0;

if (role === 'hooks') {
  let windowStart = 0;
  let inWindow = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const kind = req.url?.startsWith('/limited') ? 'limited' : 'a';
      if (kind === 'limited') {
        const t = Date.now();
        if (t - windowStart >= LIMIT.windowMs) [windowStart, inWindow] = [t, 0];
        if (++inWindow > LIMIT.posts) {
          refused++;
          res.writeHead(429, { 'Retry-After': String(LIMIT.retryAfterS) }).end();
          return;
        }
      }
      const n = MARK.exec(body)?.[1];
      if (n !== undefined) receipts.push([kind, Number(n), now()]);
      setTimeout(() => res.writeHead(204).end(), ANSWER_MS);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
}

type Endpoint = { id: string; token: string };
/** [n, endpoint index, the answer's message number (null: none), acceptance time] of each 200. */
const accepted: [number, number, number | null, number][] = [];
const statuses: Record<string, number> = {};
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let sent = 0;

async function send(origin: string, endpoints: Endpoint[], at: number): Promise<void> {
  const n = ++sent;
  const e = endpoints[at]!;
  const q = `token=${e.token}&trigger=true&sender=chat_c&sender_channel=channel-c-1234&message_author_name=Ada&message_content=${encodeURIComponent(`bench-del ${n}`)}`;
  const status = await new Promise<string>((resolve) => {
    const req = http.request(`${origin}/update/${e.id}?${q}`, { method: 'POST', agent }, (res) => {
      if (res.statusCode === 200) {
        const number = Number(res.headers['chatbridge-message-number']);
        accepted.push([n, at, Number.isSafeInteger(number) && number > 0 ? number : null, now()]);
      }
      res.resume().once('end', () => resolve(String(res.statusCode)));
    });
    req.once('error', (err) => resolve(err.message)).end();
  });
  statuses[status] = (statuses[status] ?? 0) + 1;
}

interface Request {
  /** hooks: waits until `expected` receipts or none for `quietMs` (at most `maxMs`), replies with them; `reset` forgets them. */
  collect?: { expected: number; quietMs: number; maxMs: number; reset?: boolean };
  /** messages: endpoint 0 is the rate-limited one, sent `limitedPerSec`; the rest share `ratePerSec`. */
  run?: { origin: string; endpoints: Endpoint[]; ratePerSec: number; limitedPerSec: number; durationS: number };
}

process.on('message', async (msg: Request) => {
  if (msg.collect) {
    const { expected, quietMs, maxMs } = msg.collect;
    const start = Date.now();
    for (
      let last = receipts.length, since = start;
      receipts.length < expected && Date.now() - since < quietMs && Date.now() - start < maxMs;
    ) {
      await new Promise((r) => setTimeout(r, 100));
      if (receipts.length !== last) [last, since] = [receipts.length, Date.now()];
    }
    process.send!({ receipts, refused });
    if (msg.collect.reset) [receipts, refused] = [[], 0];
  } else if (msg.run) {
    const { origin, endpoints, ratePerSec, limitedPerSec, durationS } = msg.run;
    const start = performance.now();
    const pending = new Set<Promise<void>>();
    const fire = (at: number) => {
      const p = send(origin, endpoints, at);
      pending.add(p);
      void p.then(() => pending.delete(p));
    };
    let [others, limited] = [0, 0];
    for (let elapsed = 0; elapsed < durationS * 1000; elapsed = performance.now() - start) {
      for (let due = Math.floor((elapsed / 1000) * ratePerSec) - others; due > 0; due--, others++) {
        fire(1 + Math.floor(Math.random() * (endpoints.length - 1)));
      }
      for (let due = Math.floor((elapsed / 1000) * limitedPerSec) + 1 - limited; due > 0; due--, limited++) fire(0);
      await new Promise((r) => setTimeout(r, 5));
    }
    const wallS = (performance.now() - start) / 1000;
    await Promise.all(pending);
    process.send!({ sent, perSec: sent / wallS, statuses, accepted });
  }
});
process.on('disconnect', () => process.exit(0));
