// bench/lib/loadChild.ts: pnpm bench loads each measurement from a fresh process. Its figures, its
// CPU and its update numbering must come back to the bench, and the process must not outlive it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoadChild } from '../../../bench/lib/loadChild.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const endpoints = [
  { id: 'e1', token: 't1' },
  { id: 'e2', token: 't2' },
];

let server: Server;
let origin: string;
const paths: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (paths.length < 10_000) paths.push(`${req.method} ${req.url}`);
    res.end('{}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the load generator child of pnpm bench', () => {
  it('when asked for two runs, then it answers each with the figures and the CPU of its own process, and exits when stopped', async () => {
    paths.length = 0;
    const child = await LoadChild.start({ origin, op: 'get', endpoints, connections: 2, seqFrom: 1 }, ROOT, process.env);
    const warm = await child.run(0.3);
    const measured = await child.run(0.3);
    const pid = child.pid;
    const stopped = await child.stop();

    expect(warm.figures.requests).toBeGreaterThan(0);
    expect(measured.figures.requests).toBeGreaterThan(0);
    expect(measured.figures.non2xx).toBe(0);
    expect(measured.cpuS).toBeGreaterThan(0);
    expect(new Set(paths)).toEqual(new Set(['GET /e1?token=t1', 'GET /e2?token=t2']));
    // It exited by itself when the bench let go of it, not killed after the grace period.
    expect(stopped).toEqual({ code: 0, signal: null, killed: false });
    expect(alive(pid)).toBe(false);
  });

  it('when it posts updates, then their numbers start at seqFrom and never repeat, and nextSeq is past every one sent', async () => {
    paths.length = 0;
    const child = await LoadChild.start({ origin, op: 'update', endpoints, connections: 2, seqFrom: 500 }, ROOT, process.env);
    try {
      const first = await child.run(0.2);
      const second = await child.run(0.2);
      const numbers = paths.filter((p) => p.startsWith('POST ')).map((p) => Number(/log_chat_b=log-b-(\d+)/.exec(p)![1]));
      expect(Math.min(...numbers)).toBe(500);
      expect(new Set(numbers).size).toBe(numbers.length);
      expect(first.nextSeq).toBeGreaterThan(500);
      expect(second.nextSeq).toBeGreaterThan(first.nextSeq);
      expect(second.nextSeq).toBeGreaterThan(Math.max(...numbers));
    } finally {
      await child.stop();
    }
  });

  it('when the process dies during a run, then the run fails with what happened instead of waiting forever', async () => {
    const child = await LoadChild.start({ origin, op: 'get', endpoints, connections: 1, seqFrom: 1 }, ROOT, process.env);
    const run = child.run(30);
    process.kill(child.pid, 'SIGKILL');
    await expect(run).rejects.toThrow(/load generator exited \(SIGKILL\)/);
    await child.stop();
  });

  it('when the process died between two runs, then the next run fails at once instead of waiting forever', async () => {
    const child = await LoadChild.start({ origin, op: 'get', endpoints, connections: 1, seqFrom: 1 }, ROOT, process.env);
    await child.run(0.1);
    process.kill(child.pid, 'SIGKILL');
    while (alive(child.pid)) await new Promise((done) => setTimeout(done, 20));
    await expect(child.run(0.1)).rejects.toThrow(/load generator exited \(SIGKILL\)/);
    await child.stop();
  });

  it('when no request gets an answer, then the latencies come back as NaN with the errors counted, not as null', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const child = await LoadChild.start({ origin: `http://127.0.0.1:${port}`, op: 'get', endpoints, connections: 1, seqFrom: 1 }, ROOT, process.env);
    try {
      const { figures } = await child.run(0.3);
      expect(figures.requests).toBe(0);
      expect(figures.errors).toBeGreaterThan(0);
      expect(figures.p99Ms).toBeNaN();
    } finally {
      await child.stop();
    }
  });
});
