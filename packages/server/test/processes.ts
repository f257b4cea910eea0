// Real server processes for fault tests: start main.ts (or a compiled main.js), read its URL from the
// start-up log, kill it.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  log(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startServerProcess(env: Record<string, string>, main = MAIN, nodeFlags: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeFlags, main], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', CHATBRIDGE_STORE: 'sqlite', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${log}`)), 20_000);
    const check = () => {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => reject(new Error(`server exited during start: ${log}`)));
  });
  return { url, child, log: () => log, exited };
}
