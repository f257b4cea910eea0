// The delivery scenario's baseline: a bare node:http relay doing the posts chatbridge does, and no
// more. `POST /update/{id}?...&message_content=...` answers 200 with the endpoint's next message
// number (`Chatbridge-Message-Number`), then queues the message for each webhook of that endpoint:
// every endpoint's at HOOKS/a, and the rate-limited endpoint's (LIMITED) also at HOOKS/limited. Each
// webhook takes one post at a time, in message order; a 429 or 503 holds its queue for the
// `Retry-After` it names, a failure for 100 ms, and the post is sent again. Nothing is stored,
// authenticated or validated: the floor of the work.
//   PORT=... HOST=... HOOKS=http://127.0.0.1:port LIMITED=endpoint-id node bench/relay-baseline.ts
import http from 'node:http';
import { listenUntilSignalled } from './lib/bareServer.ts';

const hooks = process.env.HOOKS ?? '';
const limited = process.env.LIMITED ?? '';
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
const numbers = new Map<string, number>();

interface Queue {
  url: string;
  posts: string[];
  busy: boolean;
}
const queues = new Map<string, Queue>();

function queueOf(key: string, url: string): Queue {
  let queue = queues.get(key);
  if (!queue) queues.set(key, (queue = { url, posts: [], busy: false }));
  return queue;
}

/** Sends the queue's first post; on success the next, else the same one after the wait it was told. */
function pump(queue: Queue): void {
  if (queue.busy || queue.posts.length === 0) return;
  queue.busy = true;
  const body = queue.posts[0]!;
  const retry = (ms: number) =>
    setTimeout(() => {
      queue.busy = false;
      pump(queue);
    }, ms);
  const req = http.request(
    queue.url,
    { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
    (res) => {
      res.resume().once('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          queue.posts.shift();
          queue.busy = false;
          pump(queue);
        } else retry(status === 429 || status === 503 ? Number(res.headers['retry-after'] ?? 1) * 1000 : 100);
      });
    },
  );
  req.once('error', () => retry(100));
  req.end(body);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const [, first, id] = url.pathname.split('/');
  if (req.method !== 'POST' || first !== 'update' || !id) {
    res.writeHead(req.url === '/' ? 200 : 404).end();
    return;
  }
  const number = (numbers.get(id) ?? 0) + 1;
  numbers.set(id, number);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Chatbridge-Message-Number': String(number) }).end('{}');
  const body = JSON.stringify({ content: url.searchParams.get('message_content'), username: url.searchParams.get('message_author_name') });
  const targets = [queueOf(`${id}:a`, `${hooks}/a`), ...(id === limited ? [queueOf(`${id}:limited`, `${hooks}/limited`)] : [])];
  for (const queue of targets) {
    queue.posts.push(body);
    pump(queue);
  }
});
listenUntilSignalled(server);
