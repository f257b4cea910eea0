// Targets of the contract tests: the real server, the Prism mock of the bundled spec, and Prism as a
// validating proxy in front of the real server. Each start* returns a handle with `url` and `close()`.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer, type TestServerOptions } from '@chatbridge/server/testing';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUNDLED_SPEC = join(repoRoot, 'packages', 'api', 'openapi.bundled.yaml');
const PRISM_BIN = join(repoRoot, 'node_modules', '.bin', 'prism');

/** Endpoint ID provisioned on the real server (and used, unprovisioned, against the mock). */
export const ENDPOINT_ID = 'contract-ep';

export interface Target {
  name: string;
  url: string;
  /** A token that the target accepts for ENDPOINT_ID. */
  token: string;
  /** A bearer token that the target accepts for the admin operations. */
  adminToken: string;
  close(): Promise<void>;
}

export interface ServerTarget extends Target {
  server: TestServer;
}

/** The real server over a scratch SQLite file, with ENDPOINT_ID provisioned. */
export async function startServerTarget(options: TestServerOptions = {}): Promise<ServerTarget> {
  const server = await startTestServer(options);
  try {
    const token = await server.provision(ENDPOINT_ID);
    return { name: 'server', url: server.url, token, adminToken: server.adminToken, server, close: () => server.close() };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** The mock accepts any token of the right format, so this one (the spec's own example) will do. */
export const MOCK_TOKEN = 'cbt_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVkcGx1Z2h5eHl6enkxMjM0NTY3';

/**
 * The options `pnpm mock` gives Prism beyond the spec, host and port, read from the root package.json's
 * script, so the mock the contract tests check is the one integrators run.
 */
function mockScriptOptions(): string[] {
  const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return scripts.mock!.split(/\s+/).filter((word) => word.startsWith('--')); // written `--name=value` there
}

/** `prism mock` on the bundled spec, as `pnpm mock` runs it. */
export async function startMockTarget(): Promise<Target> {
  const prism = await startPrism(['mock', BUNDLED_SPEC, ...mockScriptOptions()]);
  return { name: 'mock', url: prism.url, token: MOCK_TOKEN, adminToken: 'any-bearer-will-do', close: prism.close };
}

export interface PrismProcess {
  url: string;
  /** Everything Prism printed so far (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

/**
 * `prism proxy --errors` in front of `upstream`: violations become Prism's own error responses. Prism's
 * own CORS headers are off, so the answers carry exactly the upstream's headers.
 */
export function startPrismProxy(upstream: string): Promise<PrismProcess> {
  return startPrism(['proxy', BUNDLED_SPEC, upstream, '--errors', '--cors=false']);
}

/** A port that was free a moment ago (the OS picks it; Prism then binds it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

const START_TIMEOUT_MS = 60_000;

/** Spawns Prism on a free port and waits until it answers HTTP; retries once on a port race. */
async function startPrism(args: string[], attempts = 2): Promise<PrismProcess> {
  const port = await freePort();
  // Own process group (detached), so close() can end the shim's shell and its node child together.
  const child = spawn(PRISM_BIN, [...args, '-h', '127.0.0.1', '-p', String(port)], {
    cwd: repoRoot,
    env: process.env, // pnpm put Node 24 first on PATH; Prism runs on it
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const close = () => stop(child);
  try {
    await waitUntilListening(child, url, () => output);
  } catch (error) {
    await close();
    if (attempts > 1 && /EADDRINUSE/.test(output)) return startPrism(args, attempts - 1);
    throw error;
  }
  return { url, output: () => output, close };
}

/** Polls until Prism says it listens and answers a request, or fails on exit or timeout. */
async function waitUntilListening(child: ChildProcess, url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`prism exited (${child.exitCode ?? child.signalCode}) before listening:\n${output()}`);
    }
    if (output().includes('Prism is listening')) {
      try {
        await fetch(`${url}/-/live`, { signal: AbortSignal.timeout(2_000) });
        return;
      } catch {
        // not accepting connections yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`prism did not listen on ${url} within ${START_TIMEOUT_MS} ms:\n${output()}`);
}

/** SIGTERM to the child's process group, SIGKILL if it is still there after 5 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
