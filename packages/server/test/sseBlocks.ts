// Reads a text/event-stream body block by block (the blocks ended by an empty line), for tests that
// check the wire format of the event streams.

export interface SseBlock {
  text: string;
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
  retry?: number;
  /** Fields no SSE client knows (an EventSource ignores them). */
  extra: Record<string, string>;
}

export function parseSseBlock(text: string): SseBlock {
  const block: SseBlock = { text, extra: {} };
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    const field = line.slice(0, at);
    const value = line.slice(at + 1).replace(/^ /, '');
    if (field === '') block.comment = value;
    else if (field === 'id') block.id = value;
    else if (field === 'event') block.event = value;
    else if (field === 'data') block.data = value;
    else if (field === 'retry') block.retry = Number(value);
    else block.extra[field] = value;
  }
  return block;
}

export interface SseReader {
  response: Response;
  /** The next block that is no heartbeat; undefined when the stream ended; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseBlock | undefined>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  let reading: Promise<void> | undefined;
  const next = async (timeoutMs = 5000): Promise<SseBlock | undefined> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = parseSseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (block.comment === 'heartbeat') continue;
        return block;
      }
      if (ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no block within ${timeoutMs} ms; buffered ${JSON.stringify(buffer.slice(0, 200))}`);
      reading ??= reader
        .read()
        .then(
          ({ value, done }) => {
            if (done) ended = true;
            else buffer += value;
          },
          () => void (ended = true),
        )
        .finally(() => (reading = undefined));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([reading, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  };
  return { response, next, close: () => controller.abort() };
}
