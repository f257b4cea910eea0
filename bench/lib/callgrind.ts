// Reading callgrind's counts (see bench/instructions.ts): self instructions per function from
// `callgrind_annotate`'s listing of one dump, with the JIT-compiled JavaScript named through the perf
// map V8 writes with --perf-basic-prof (callgrind itself sees only addresses there).

/**
 * Self instructions per function, from `callgrind_annotate` of one dump; JIT code named through V8's
 * perf map, its script paths relative to `checkout` when given (so two checkouts' functions match).
 */
export function selfCosts(annotated: string, perfMap: string, checkout?: string): { total: number; byFunction: Map<string, number> } {
  const total = Number(/^\s*([\d,]+) \([^)]*\)\s+PROGRAM TOTALS/m.exec(annotated)?.[1]?.replaceAll(',', '') ?? NaN);
  const jit = perfMap
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      const label = name.join(' ').replace(/^JS:/, '');
      return { start: parseInt(start!, 16), end: parseInt(start!, 16) + parseInt(size!, 16), name: checkout ? label.replaceAll(`${checkout}/`, '') : label };
    });
  // V8 reuses the addresses of code it has thrown away: the latest entry covering an address wins.
  const jitName = (address: number) => jit.findLast((e) => e.start <= address && address < e.end)?.name;
  const byFunction = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(?!PROGRAM TOTALS)(.+)$/.exec(line);
    if (!m) continue;
    const cost = Number(m[1]!.replaceAll(',', ''));
    // A dump taken after zeroing also lists the frames that were on the stack then (main, the event
    // loop) with the whole window's cost: not self cost.
    if (cost >= total * 0.5) continue;
    let name = m[2]!.replace(/\s*\[[^\]]*\]$/, '').replace(/^\?\?\?:/, '');
    const address = /^0x([0-9a-f]+)$/.exec(name);
    if (address) name = `JS ${jitName(parseInt(address[1]!, 16)) ?? name}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + cost);
  }
  return { total, byFunction };
}

/**
 * Which of the server's instructions were V8's garbage collector or its compilers. Both run in bursts
 * (a mark-compact every few thousand updates; compilations until the code has settled), so whether a
 * burst falls inside the counted window moves the total by up to a fifth; what is left, the code
 * running the requests, is the figure that repeats.
 */
export type Part = 'garbage collection' | 'compilation' | 'the requests';

// The write barrier (RecordWrite builtins) is the collector's bookkeeping in the mutator's code, and it
// does marking work while a collection marks: counted with the collector, the requests' part of two
// windows no longer differs by whether one of them caught a marking phase (fifteenth pass: it moved
// 4-7% with the barrier in it). OnMoveEvent is V8 logging each object a collection moves.
const GC = /\b(Scaveng|MarkCompact|Marking|Sweep|Evacuat|RecordMigrated|LiveObjectVisitor|RememberedSet|SlotSet|IteratePointers|Ephemeron|MinorMS|OnMoveEvent)|heap::base::|\bBuiltins_RecordWrite/;
const COMPILATION = /\bv8::internal::(compiler::|maglev::|baseline::|wasm::|Compiler::|interpreter::Bytecode|Parser|Scanner|PreParser|AstValueFactory)/;

export function partOf(name: string): Part {
  if (COMPILATION.test(name)) return 'compilation';
  if (GC.test(name)) return 'garbage collection';
  return 'the requests';
}
