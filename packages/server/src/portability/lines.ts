// Lines of a file, read a chunk at a time: memory holds one line (at most `maxBytes`) and one chunk,
// whatever the file's size. Each line is decoded as strict UTF-8.
import { createReadStream } from 'node:fs';

export type Line = { number: number; text: string } | { number: number; problem: string };

export async function* readLines(path: string, maxBytes: number): AsyncGenerator<Line> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  let tooLong = false;
  const finish = (): Line => {
    number++;
    const bytes = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    if (tooLong) {
      tooLong = false;
      return { number, problem: `longer than ${maxBytes} bytes` };
    }
    try {
      return { number, text: decoder.decode(bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes) };
    } catch {
      return { number, problem: 'not valid UTF-8' };
    }
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      if (pendingBytes + (nl - start) > maxBytes) tooLong = true;
      if (!tooLong) pending.push(chunk.subarray(start, nl));
      yield finish();
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (tooLong || pendingBytes + rest.length > maxBytes) {
      // Past the bound: the rest of this line is skipped, not kept.
      tooLong = true;
      pending = [];
      pendingBytes = 0;
    } else if (rest.length > 0) {
      pending.push(Buffer.from(rest));
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0 || tooLong) yield finish();
}
