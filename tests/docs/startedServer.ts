// A server process a docs test started: its output kept, and the URL its start-up line names.
import type { ChildProcess } from 'node:child_process';

/** Collects `server`'s output and waits (20 s at most) for its start-up line; throws with the output if it never comes. */
export async function startedServer(server: ChildProcess, what: string): Promise<{ url: string; log: () => string }> {
  let log = '';
  server.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  server.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  let url = '';
  for (let waited = 0; !url && waited < 20_000; waited += 50) {
    url = /"url":"(http:\/\/[^"]+)"/.exec(log)?.[1] ?? '';
    if (server.exitCode !== null) break;
    if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!url) throw new Error(`${what} did not start:\n${log}`);
  return { url, log: () => log };
}
