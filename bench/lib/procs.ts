// Child processes and temporary directories, tracked so that none outlives the bench: it ends
// normally, on an error, or on Ctrl-C / SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
const cleanups = new Set<() => Promise<void>>();
let interrupted = false;

/** True once Ctrl-C / SIGTERM arrived: nothing new starts while the handler cleans up. */
export const isInterrupted = () => interrupted;

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Work an interrupted run still does before it exits (deleting its rows from a shared database); returns its remover. */
export function onInterrupt(work: () => Promise<void>): () => void {
  cleanups.add(work);
  return () => cleanups.delete(work);
}

function killAllNow(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Installs the exit and signal handlers; call once at start. */
export function installCleanup(): void {
  process.on('exit', killAllNow);
  const interrupt = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130); // a second Ctrl-C: the exit handler kills what is left
    interrupted = true;
    console.error(`\n${signal}: stopping the servers and removing temporary files...`);
    void Promise.allSettled([...live].map((c) => stopChild(c, 3_000)))
      .then(() => Promise.allSettled([...cleanups].map((c) => c())))
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
}

export interface Spawned {
  name: string;
  child: ChildProcess;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last 16 kB it printed (stdout and stderr together). */
  output(): string;
}

/** Starts this Node.js with `args`, tracked for clean-up; `ipc` adds a channel (structured clone, so NaN stays NaN). */
export function spawnTracked(name: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, ipc = false): Spawned {
  if (interrupted) throw new Error(`interrupted: not starting ${name}`);
  const child = spawn(process.execPath, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc' as const] : [])],
    ...(ipc && { serialization: 'advanced' as const }),
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  live.add(child);
  let tail = '';
  const collect = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-16_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  }).finally(() => live.delete(child));
  return { name, child, pid: child.pid, exited, output: () => tail };
}

/**
 * A node script with an IPC channel: ask() sends one message and resolves with the next reply (rejects
 * with its last output once it has exited); stop() disconnects it (it exits then) and kills it after 5 s.
 */
export function ipcChild(name: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const proc = spawnTracked(name, args, env, cwd, true);
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      proc.child.once('message', (reply) => resolve(reply as T));
      void proc.exited.then(({ code, signal }) =>
        reject(new Error(`${name} exited (${signal ?? `code ${code}`}): ${proc.output().trim().slice(-2_000)}`)),
      );
    });
  const ask = <T>(message: object) => {
    if (proc.child.connected) proc.child.send(message);
    return next<T>();
  };
  const stop = async () => {
    if (proc.child.connected) proc.child.disconnect();
    const timer = setTimeout(() => void stopChild(proc, 2_000), 5_000);
    await proc.exited;
    clearTimeout(timer);
  };
  return { proc, next, ask, stop };
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(
  target: Spawned | ChildProcess,
  graceMs = 15_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
  const child = 'child' in target ? target.child : target;
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode, killed: false };
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const end = await done;
  clearTimeout(timer);
  return { ...end, killed: end.signal === 'SIGKILL' };
}

/** Runs a node script to completion. */
export async function runNode(name: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const p = spawnTracked(name, args, env, cwd);
  return { code: (await p.exited).code, output: p.output() };
}

/** A port that was free a moment ago (the server is told to listen on it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 2xx; rejects if the process exits first or `timeoutMs` passes. */
export async function waitUntilServing(url: string, proc: Spawned, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${proc.name} exited before serving:\n${proc.output().trim() || '(no output)'}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
      async (res) => {
        await res.arrayBuffer();
        return res.ok;
      },
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${proc.name} did not serve ${url} within ${timeoutMs} ms:\n${proc.output().trim()}`);
}

/** VmRSS (resident set now) of a live process, in MB; undefined off Linux. */
export function rssMB(pid: number): number | undefined {
  try {
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : (Number(kib) * 1024) / 1e6;
  } catch {
    return undefined;
  }
}

/** VmHWM (peak resident set since start) of a live process, in MB; undefined off Linux. */
export function peakRssMB(pid: number): number | undefined {
  try {
    const kib = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : (Number(kib) * 1024) / 1e6;
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds a live process has used (USER_HZ is 100 on Linux); undefined off Linux. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
