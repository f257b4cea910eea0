// Text written a buffer at a time, waiting when the destination is slow: an export of any size holds
// one buffer in memory. A file is written beside its destination and renamed over it once complete
// and on disk, so a failed export never leaves a file that looks whole.
import { once } from 'node:events';
import { open, rename, rm } from 'node:fs/promises';

const FLUSH_AT = 64 * 1024;

export interface TextSink {
  write(text: string): Promise<void>;
  /** Everything written is in place (for a file: on disk, under its name). */
  finish(): Promise<void>;
  /** Gives up: a file's partial copy is removed. */
  abandon(): Promise<void>;
}

export function stdoutSink(): TextSink {
  let buffered = '';
  const flush = async () => {
    if (buffered === '') return;
    const text = buffered;
    buffered = '';
    if (!process.stdout.write(text)) await once(process.stdout, 'drain');
  };
  return {
    async write(text) {
      buffered += text;
      if (buffered.length >= FLUSH_AT) await flush();
    },
    finish: flush,
    async abandon() {},
  };
}

/** Readable by its owner only: the file holds token digests and webhook URLs. */
export async function fileSink(path: string): Promise<TextSink> {
  const partial = `${path}.partial`;
  const handle = await open(partial, 'w', 0o600);
  let buffered = '';
  const flush = async () => {
    if (buffered === '') return;
    const text = buffered;
    buffered = '';
    await handle.write(text);
  };
  return {
    async write(text) {
      buffered += text;
      if (buffered.length >= FLUSH_AT) await flush();
    },
    async finish() {
      await flush();
      await handle.sync();
      await handle.close();
      await rename(partial, path);
    },
    async abandon() {
      await handle.close().catch(() => undefined);
      await rm(partial, { force: true });
    },
  };
}
