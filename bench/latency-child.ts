// A latency scenario's processes, one role each (argv[2]), driven over IPC by bench/latency.ts:
//   streams   opens the event streams and times each event that carries a trigger;
//   webhooks  a webhook receiver on 127.0.0.1 that times each request and counts its Idempotency-Key;
//   triggers  sends `updateEndpoint` triggers from chat_c at a fixed rate.
// A trigger's message_content is `bench-lat <n> <send time>`: the time is the sender's wall clock in
// ms (performance.timeOrigin + performance.now()), read again where the event arrives, on the same
// machine. Each role answers a request message with one reply; it exits when the parent disconnects.
import http from 'node:http';

type Endpoint = { id: string; token: string };
const now = () => performance.timeOrigin + performance.now();
const MARK = /bench-lat (\d+) ([\d.]+)/;
const latencies: number[] = [];
let [received, closed] = [0, 0];
const seen = new Set<string>(); // `${stream}:${n}`: a later change of the same message is no new event

/** Times the trigger in `text` once per stream; other changes (expiry, reads) carry none or an old one. */
function arrived(text: string, stream: string | number): void {
  const m = MARK.exec(text);
  if (!m || seen.has(`${stream}:${m[1]}`)) return;
  seen.add(`${stream}:${m[1]}`);
  received++;
  latencies.push(now() - Number(m[2]));
}

function figures(extra: Record<string, unknown> = {}) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
  return { received, closed, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? NaN, ...extra };
}

/** Waits until `expected` arrived or nothing arrived for `quietMs`. */
async function settle(expected: number, quietMs: number): Promise<void> {
  for (let last = received, since = Date.now(); received < expected && Date.now() - since < quietMs; ) {
    await new Promise((r) => setTimeout(r, 100));
    if (received !== last) [last, since] = [received, Date.now()];
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const role = process.argv[2];
const keys = new Map<string, number>();
if (role === 'webhooks') {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const key = String(req.headers['idempotency-key']);
      keys.set(key, (keys.get(key) ?? 0) + 1);
      arrived(body, key);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as { port: number }).port });
  });
}

/** Opens one stream; resolves once its first event (an endpoint's current record) arrived, or with the refusal's status. */
function open(url: string, stream: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      if (res.statusCode !== 200) return res.resume().once('end', () => resolve(res.statusCode ?? 0));
      if (headers.Authorization) resolve(200); // a bot stream starts with no record
      let buffer = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (event.startsWith('id:') || event.includes('\nid:')) resolve(200);
          arrived(event, stream);
        }
      });
      res.once('close', () => {
        closed++;
        resolve(599);
      });
    });
    req.once('error', () => resolve(0));
  });
}

let sent = 0;
const statuses: Record<string, number> = {};
async function trigger(origin: string, e: Endpoint): Promise<void> {
  const n = ++sent;
  const q = `token=${e.token}&trigger=true&sender=chat_c&sender_channel=channel-c-1234&message_author_name=Ada&message_content=${encodeURIComponent(`bench-lat ${n} ${now().toFixed(3)}`)}`;
  const status = await new Promise<string>((resolve) => {
    const req = http.request(`${origin}/update/${e.id}?${q}`, { method: 'POST', agent }, (res) =>
      res.resume().once('end', () => resolve(String(res.statusCode))),
    );
    req.once('error', (err) => resolve(err.message)).end();
  });
  statuses[status] = (statuses[status] ?? 0) + 1;
}

interface Request {
  /** streams: open `perEndpoint` streams per endpoint, or `bot.count` bot streams. */
  open?: { origin: string; endpoints: Endpoint[]; perEndpoint: number; bot?: { key: string; count: number } };
  /** Replies with what arrived; `reset` then forgets it (after a warm-up). */
  collect?: { expected: number; quietMs: number; reset?: boolean };
  run?: { origin: string; endpoints: Endpoint[]; ratePerSec: number; durationS: number };
}

process.on('message', async (msg: Request) => {
  if (msg.open) {
    const { origin, endpoints, perEndpoint, bot } = msg.open;
    const urls = bot
      ? Array.from({ length: bot.count }, () => [`${origin}/events`, { Authorization: `Bearer ${bot.key}` }] as const)
      : endpoints.flatMap((e) => Array.from({ length: perEndpoint }, () => [`${origin}/events/${e.id}?token=${e.token}`, {}] as const));
    const refused: Record<string, number> = {};
    for (let i = 0; i < urls.length; i += 200) {
      const codes = await Promise.all(urls.slice(i, i + 200).map(([url, headers], k) => open(url, i + k, headers)));
      for (const c of codes) if (c !== 200) refused[c] = (refused[c] ?? 0) + 1;
    }
    [received, latencies.length] = [0, 0];
    process.send!({ opened: urls.length, refused });
  } else if (msg.collect) {
    await settle(msg.collect.expected, msg.collect.quietMs);
    const counts = [...keys.values()];
    process.send!(figures(role === 'webhooks' ? { keys: counts.length, duplicated: counts.filter((c) => c > 1).length } : {}));
    if (msg.collect.reset) [received, latencies.length] = [0, 0];
    if (msg.collect.reset) keys.clear();
  } else if (msg.run) {
    const { origin, endpoints, ratePerSec, durationS } = msg.run;
    const [start, from] = [performance.now(), sent];
    for (const k of Object.keys(statuses)) delete statuses[k];
    const pending = new Set<Promise<void>>();
    for (let elapsed = 0; elapsed < durationS * 1000; elapsed = performance.now() - start) {
      for (let due = Math.floor((elapsed / 1000) * ratePerSec) - (sent - from); due > 0; due--) {
        const p = trigger(origin, endpoints[Math.floor(Math.random() * endpoints.length)]!);
        pending.add(p);
        void p.then(() => pending.delete(p));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const wallS = (performance.now() - start) / 1000;
    await Promise.all(pending);
    process.send!({ sent: sent - from, perSec: (sent - from) / wallS, ok: statuses['200'] ?? 0, statuses });
  }
});
process.on('disconnect', () => process.exit(0));
