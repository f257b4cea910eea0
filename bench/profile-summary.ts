// Where the time goes in a V8 CPU profile (.cpuprofile, as written by node --cpu-prof):
// the top functions by self time, with file:line, and self time per package.
//
//   pnpm exec node bench/profile-summary.ts [FILE.cpuprofile | DIR] [--top 25] [--from S] [--to S]
//   pnpm exec node bench/profile-summary.ts FILE --callers writev [--depth 4]
//
// Without a file, the newest profile in bench/results/profiles is read. --from/--to keep only the
// samples taken that many seconds after the profile started (pnpm bench passes its measured window,
// so start-up, warm-up and shutdown are left out). --callers NAME lists the call chains through which
// the function NAME spent its self time. Self time is the sum of the
// sampling intervals in which the function was on top of the stack; total time counts each sample
// once per function anywhere on the stack (recursion counted once).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number; // 0-based
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  name: string;
  location: string;
  pkg: string;
  selfMs: number;
  totalMs: number;
}

export interface CallerChain {
  chain: string;
  ms: number;
}

export interface ProfileSummary {
  file: string;
  /** With `callersOf`: that function's self time by call chain (innermost caller first). */
  callers?: CallerChain[];
  wallMs: number;
  /** The part of the profile summarized, in ms from its start. */
  window: { fromMs: number; toMs: number };
  sampledMs: number;
  idleMs: number;
  functions: FunctionTime[];
  packages: { pkg: string; selfMs: number }[];
}

const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Where a frame's code lives: a package name, chatbridge, node internals, or V8's own buckets. */
function packageOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native/V8 builtin)';
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (path.startsWith(REPO)) return `chatbridge ${relative(REPO, path).split('/').slice(0, 2).join('/')}`;
  return path;
}

function locationOf(frame: CallFrame): string {
  if (!frame.url) return '';
  let path = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) path = path.slice(nm + '/node_modules/'.length);
  else if (path.startsWith(REPO)) path = relative(REPO, path);
  return `${path}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
}

export function summarizeProfile(
  file: string,
  window: { fromMs?: number; toMs?: number } = {},
  callersOf?: { name: string; depth: number },
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const keyOf = (node: ProfileNode) => {
    const f = node.callFrame;
    return `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`;
  };
  const stats = new Map<string, FunctionTime>();
  const statOf = (node: ProfileNode) => {
    const key = keyOf(node);
    let s = stats.get(key);
    if (!s) {
      const f = node.callFrame;
      s = { name: f.functionName || '(anonymous)', location: locationOf(f), pkg: packageOf(f), selfMs: 0, totalMs: 0 };
      stats.set(key, s);
    }
    return s;
  };

  let sampledMs = 0;
  let idleMs = 0;
  const wallMs = (profile.endTime - profile.startTime) / 1000;
  const fromMs = Math.max(0, window.fromMs ?? 0);
  const toMs = Math.min(wallMs, window.toMs ?? wallMs);
  let atMs = 0;
  const chains = new Map<string, number>();
  // timeDeltas[i] is the time since the previous sample; it is charged to sample i's stack.
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    atMs += ms;
    if (ms <= 0 || atMs < fromMs || atMs > toMs) continue;
    const leaf = byId.get(profile.samples[i]!);
    if (!leaf) continue;
    sampledMs += ms;
    if (leaf.callFrame.functionName === '(idle)') idleMs += ms;
    statOf(leaf).selfMs += ms;
    if (callersOf && leaf.callFrame.functionName === callersOf.name) {
      const names: string[] = [];
      for (let id = parent.get(leaf.id); id !== undefined && names.length < callersOf.depth; id = parent.get(id)) {
        const node = byId.get(id)!;
        if (node.callFrame.functionName === '(root)') break;
        const loc = locationOf(node.callFrame);
        names.push(`${node.callFrame.functionName || '(anonymous)'}${loc ? ` (${loc})` : ''}`);
      }
      const chain = names.join('\n      <- ');
      chains.set(chain, (chains.get(chain) ?? 0) + ms);
    }
    const seen = new Set<FunctionTime>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id)!;
      if (node.callFrame.functionName === '(root)') break;
      const s = statOf(node);
      if (!seen.has(s)) {
        seen.add(s);
        s.totalMs += ms;
      }
    }
  }
  const packages = new Map<string, number>();
  for (const s of stats.values()) packages.set(s.pkg, (packages.get(s.pkg) ?? 0) + s.selfMs);
  return {
    file,
    ...(callersOf && { callers: [...chains].map(([chain, ms]) => ({ chain, ms })).sort((a, b) => b.ms - a.ms) }),
    wallMs,
    window: { fromMs, toMs },
    sampledMs,
    idleMs,
    functions: [...stats.values()].sort((a, b) => b.selfMs - a.selfMs),
    packages: [...packages].map(([pkg, selfMs]) => ({ pkg, selfMs })).sort((a, b) => b.selfMs - a.selfMs),
  };
}

export function formatSummary(s: ProfileSummary, top = 25): string {
  const busy = s.sampledMs - s.idleMs;
  const pct = (ms: number) => (busy > 0 ? ((100 * ms) / busy).toFixed(1) : '-').padStart(5);
  const out: string[] = [];
  out.push(`${s.file}`);
  const whole = s.window.fromMs === 0 && s.window.toMs === s.wallMs;
  out.push(
    `  ${whole ? `whole profile, ${(s.wallMs / 1000).toFixed(1)} s` : `samples from ${(s.window.fromMs / 1000).toFixed(1)} s to ${(s.window.toMs / 1000).toFixed(1)} s of ${(s.wallMs / 1000).toFixed(1)} s`}: ` +
      `sampled ${(s.sampledMs / 1000).toFixed(1)} s, idle ${(s.idleMs / 1000).toFixed(1)} s; percentages are of the ${(busy / 1000).toFixed(1)} s not idle`,
  );
  out.push('');
  out.push(`  top ${top} functions by self time`);
  out.push(`  ${'#'.padStart(3)}  ${'self ms'.padStart(8)} ${'self%'.padStart(5)} ${'total%'.padStart(6)}  function  (file:line:col)`);
  s.functions
    .filter((f) => f.name !== '(idle)' && f.name !== '(root)')
    .slice(0, top)
    .forEach((f, i) => {
      out.push(
        `  ${String(i + 1).padStart(3)}  ${f.selfMs.toFixed(0).padStart(8)} ${pct(f.selfMs)} ${pct(f.totalMs).padStart(6)}  ${f.name}` +
          (f.location ? `  (${f.location})` : ''),
      );
    });
  if (s.callers) {
    out.push('');
    out.push(`  callers of that self time`);
    for (const c of s.callers.slice(0, top)) out.push(`  ${c.ms.toFixed(0).padStart(8)} ms ${pct(c.ms)}%  ${c.chain}`);
  }
  out.push('');
  out.push('  self time by package');
  for (const p of s.packages.filter((p) => p.pkg !== '(idle)').slice(0, 15)) {
    out.push(`  ${p.selfMs.toFixed(0).padStart(8)} ms ${pct(p.selfMs)}%  ${p.pkg}`);
  }
  return out.join('\n');
}

/** The newest .cpuprofile in a directory. */
export function newestProfile(dir: string): string | undefined {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return files[0];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    options: {
      top: { type: 'string', default: '25' },
      from: { type: 'string' },
      to: { type: 'string' },
      callers: { type: 'string' },
      depth: { type: 'string', default: '4' },
    },
    allowPositionals: true,
  });
  const target = positionals[0] ?? join(REPO, 'bench/results/profiles');
  const file = statSync(target).isDirectory() ? newestProfile(target) : target;
  if (!file) {
    console.error(`no .cpuprofile in ${target}; run "pnpm bench --cpu-prof=get-sqlite" first`);
    process.exit(1);
  }
  const window = {
    ...(values.from !== undefined && { fromMs: Number(values.from) * 1000 }),
    ...(values.to !== undefined && { toMs: Number(values.to) * 1000 }),
  };
  const callers = values.callers === undefined ? undefined : { name: values.callers, depth: Number(values.depth) };
  console.log(formatSummary(summarizeProfile(file, window, callers), Number(values.top)));
}
