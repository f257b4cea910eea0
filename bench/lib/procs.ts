// Child processes and temporary directories, tracked so that every one of them is gone when the
// bench ends: normally, on an error, or on Ctrl-C / SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
const cleanups: (() => Promise<void>)[] = [];

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Leaves `dir` in place when the process exits (for a run asked to keep its files). */
export function keepTempDir(dir: string): void {
  tempDirs.delete(dir);
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Asynchronous clean-up (say, deleting a run's rows from a shared database) for an interrupted run. */
export function onInterrupt(work: () => Promise<void>): () => void {
  cleanups.push(work);
  return () => {
    const i = cleanups.indexOf(work);
    if (i !== -1) cleanups.splice(i, 1);
  };
}

function killAllNow(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

let interrupted = false;
/** True once Ctrl-C / SIGTERM arrived: nothing new is started, the handler is cleaning up. */
export const isInterrupted = () => interrupted;

let installed = false;
/** Installs the handlers; call once at start. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  // Last resort, synchronous: whatever is still running is killed and every temp dir removed.
  process.on('exit', killAllNow);
  const interrupt = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    console.error(`\n${signal}: stopping the servers and removing temporary files...`);
    const graceful = Promise.allSettled([...live].map((c) => stopChild(c, 3_000)));
    void graceful
      .then(() => Promise.allSettled(cleanups.map((c) => c())))
      .finally(() => {
        killAllNow();
        process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15));
      });
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  process.on('SIGHUP', interrupt);
}

export interface Spawned {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines it printed (stdout and stderr together). */
  output(): string;
  /** Lines it printed so far. */
  lines(): number;
}

const TAIL_CHARS = 16_000;

export interface SpawnOptions {
  /** Started by the interrupt handler's clean-up, so allowed after Ctrl-C. */
  forCleanup?: boolean;
  /** The program; this Node.js by default. */
  command?: string;
  /** An IPC channel to the child (child.send / process.send), with the structured clone. */
  ipc?: boolean;
}

/** Starts `command` (this Node.js unless told otherwise) with `args`, tracked for cleanup. */
export function spawnTracked(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  { forCleanup = false, command = process.execPath, ipc = false }: SpawnOptions = {},
): Spawned {
  if (interrupted && !forCleanup) throw new Error(`interrupted: not starting ${name}`);
  // IPC messages go through the structured clone ('advanced'), not JSON, so that NaN stays NaN.
  const child = spawn(command, args, {
    cwd,
    env,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    ...(ipc && { serialization: 'advanced' as const }),
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  live.add(child);
  let tail = '';
  let lines = 0;
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    tail = (tail + text).slice(-TAIL_CHARS);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
    child.once('error', () => {
      live.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  return { name, child, pid: child.pid, exited, output: () => tail, lines: () => lines };
}

/** SIGTERM, then SIGKILL after `graceMs`. Resolves with how it ended. */
export async function stopChild(
  target: Spawned | ChildProcess,
  graceMs = 15_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
  const child = 'child' in target ? target.child : target;
  if (child.exitCode !== null || child.signalCode !== null) {
    return { code: child.exitCode, signal: child.signalCode, killed: false };
  }
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const first = await Promise.race([done, timeout]);
  clearTimeout(timer);
  if (first !== 'timeout') return { ...first, killed: false };
  child.kill('SIGKILL');
  return { ...(await done), killed: true };
}

/** Runs a node script to completion (tracked, so Ctrl-C stops it too). */
export async function runNode(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs: number,
  forCleanup = false,
): Promise<{ code: number | null; output: string }> {
  const p = spawnTracked(name, args, env, cwd, { forCleanup });
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, output: p.output() };
}

/** A port that was free a moment ago (the server is told to listen on it). */
export async function freePort(): Promise<number> {
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
  void proc.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${proc.name} exited before serving:\n${proc.output().trim() || '(no output)'}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${proc.name} did not serve ${url} within ${timeoutMs} ms:\n${proc.output().trim()}`);
}

/** VmHWM (peak resident set since start) and VmRSS of a live process, in MB (10^6 bytes); undefined off Linux. */
export function memoryOf(pid: number): { peakRssMB: number; rssMB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakRssMB: (kib('VmHWM') * 1024) / 1e6, rssMB: (kib('VmRSS') * 1024) / 1e6 };
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS_PER_S = 100; // USER_HZ; 100 on every Linux this runs on

/** User + system CPU seconds a live process has used so far (undefined off Linux). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at state (field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S; // utime, stime
  } catch {
    return undefined;
  }
}

/** CPU seconds the whole machine has been busy (all cores; /proc/stat), to see other load during a run. */
export function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / CLOCK_TICKS_PER_S;
  } catch {
    return undefined;
  }
}
