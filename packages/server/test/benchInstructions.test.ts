// bench/instructions.ts reads callgrind_annotate's listing: what it quotes per function must be self
// cost, with the JIT-compiled JavaScript named by the latest code V8 placed at that address.
import { expect, it } from 'vitest';
import { partOf, selfCosts } from '../../../bench/lib/callgrind.ts';

const ANNOTATED = `--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
1,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                 file:function
--------------------------------------------------------------------------------
1,000,000 (100.0%)  ./csu/../sysdeps/nptl/libc_start_call_main.h:(below main) [/usr/lib/x86_64-linux-gnu/libc.so.6]
  999,000 (99.90%)  ???:node::SpinEventLoopInternal(node::Environment*) [/usr/bin/node]
  300,000 (30.00%)  ???:v8::internal::JsonParser<unsigned char>::ScanJsonString(bool) [/usr/bin/node]
  200,000 (20.00%)  ???:0x0000000028316700 [???]
  100,000 (10.00%)  ???:0x0000000028400010 [???]
   50,000 ( 5.00%)  ???:sqlite3VdbeExec [/usr/bin/node]
`;

const PERF_MAP = ['28316000 1000 JS:^parse node:querystring:317:15', '28316600 200 JS:*parse node:querystring:317:15', ''].join('\n');

it('when the listing comes from a dump taken after zeroing, then frames carrying the whole window are not counted as self cost', () => {
  const { total, byFunction } = selfCosts(ANNOTATED, PERF_MAP);
  expect(total).toBe(1_000_000);
  expect(byFunction.has('./csu/../sysdeps/nptl/libc_start_call_main.h:(below main)')).toBe(false);
  expect(byFunction.has('node::SpinEventLoopInternal(node::Environment*)')).toBe(false);
  expect(byFunction.get('v8::internal::JsonParser<unsigned char>::ScanJsonString(bool)')).toBe(300_000);
  expect(byFunction.get('sqlite3VdbeExec')).toBe(50_000);
});

it('when two JIT entries cover an address, then the later one names it, and an address no entry covers keeps its address', () => {
  const { byFunction } = selfCosts(ANNOTATED, PERF_MAP);
  expect(byFunction.get('JS *parse node:querystring:317:15')).toBe(200_000);
  expect(byFunction.has('JS ^parse node:querystring:317:15')).toBe(false);
  expect(byFunction.get('JS 0x0000000028400010')).toBe(100_000);
});

it('when a checkout is given, then JIT names lose its path, so the same function of two checkouts has one name', () => {
  const map = '28400000 100 JS:*next /tmp/wt-a/node_modules/router/index.js:189:17\n';
  const { byFunction } = selfCosts(ANNOTATED, map, '/tmp/wt-a');
  expect(byFunction.get('JS *next node_modules/router/index.js:189:17')).toBe(100_000);
});

it('when a function is V8 collecting garbage or compiling, then it is counted apart from the requests', () => {
  expect(partOf('v8::internal::Scavenger::ScavengePage(v8::internal::MutablePageMetadata*)')).toBe('garbage collection');
  expect(partOf('void v8::internal::MarkingVisitorBase<v8::internal::MainMarkingVisitor>::ProcessStrongHeapObject<x>(y)')).toBe('garbage collection');
  expect(partOf('Builtins_RecordWriteSaveFP')).toBe('garbage collection');
  expect(partOf('v8::internal::Heap::OnMoveEvent(v8::internal::Tagged<v8::internal::HeapObject>, v8::internal::Tagged<v8::internal::HeapObject>, int)')).toBe('garbage collection');
  expect(partOf('v8::internal::compiler::GraphReducer::ReduceTop()')).toBe('compilation');
  expect(partOf('v8::internal::maglev::MaglevGraphBuilder::Build()')).toBe('compilation');
  expect(partOf('v8::internal::JsonParser<unsigned char>::ScanJsonString(bool)')).toBe('the requests');
  expect(partOf('JS *parse node:querystring:317:15')).toBe('the requests');
  expect(partOf('sqlite3VdbeExec')).toBe('the requests');
});
