// Loads a kernbench --trace file with the Chrome DevTools trace engine
// (npm @paulirish/trace_engine, the Performance panel's model) and checks
// that the engine reads it as docs/observability.md documents:
//   - parsing raises no error and logs no error or warning;
//   - every slice ("ph":"X") is placed in its thread's tree: none is dropped
//     as mis-nested (the engine drops a slice that starts inside the previous
//     one and ends after it, comparing ts + dur as floating point);
//   - every flow resolves: each flow phase event (s/t/f) binds to a slice
//     (equal ts, pid, tid and cat) and the engine's flow holds all of them.
// Prints the counts as one JSON line on stdout; exit 0 when all hold,
// 1 when one does not, 2 on a usage or read error.
import fs from 'node:fs';

import * as Trace from '@paulirish/trace_engine';
import { polyfillDOMRect } from '@paulirish/trace_engine/analyze-trace.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node check_trace.mjs TRACE.json');
  process.exit(2);
}

let events;
try {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  events = Array.isArray(json) ? json : json.traceEvents;
  if (!Array.isArray(events)) throw new Error('no traceEvents array');
} catch (e) {
  console.error(`${file}: ${e.message}`);
  process.exit(2);
}

// What the engine logs while parsing counts as an error.
const logged = [];
for (const level of ['error', 'warn']) {
  const original = console[level];
  console[level] = (...args) => {
    logged.push(`${level}: ${args.map(String).join(' ').slice(0, 300)}`);
    original.apply(console, args);
  };
}

polyfillDOMRect();
const errors = [];
let parsed = null;
try {
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  parsed = model.parsedTrace()?.data ?? null;
  if (!parsed) errors.push('the engine returned no parsed trace');
  for (const w of parsed?.Warnings?.perWarning?.keys() ?? []) errors.push(`engine warning: ${JSON.stringify(w).slice(0, 300)}`);
} catch (e) {
  errors.push(`parse threw: ${e.stack ?? e}`);
}
errors.push(...logged);

const key = (e) => `${e.ts}|${e.pid}|${e.tid}|${e.cat}`;
const slices = events.filter((e) => e.ph === 'X');

// Slices kept in the threads' trees, and those dropped.
let placed = 0, slicesSeen = 0;
const misNested = [];
if (parsed) {
  const { processes, entryToNode } = parsed.Renderer;
  for (const [, proc] of processes) {
    for (const [, thread] of proc.threads) {
      for (const entry of thread.entries) {
        if (entry.ph !== 'X') continue;
        ++slicesSeen;
        if (entryToNode.has(entry)) ++placed;
        else if (misNested.length < 5) misNested.push(`${entry.name} ts=${entry.ts} dur=${entry.dur} tid=${entry.tid}`);
      }
    }
  }
}
const misNestedCount = slicesSeen - placed;
if (slicesSeen !== slices.length) {
  errors.push(`the engine's threads hold ${slicesSeen} of the file's ${slices.length} slices`);
}

// Flows: a flow is the phase events sharing cat, name and id (the engine's
// grouping). Resolved: the engine's flow holds exactly the slices those
// phase events name.
const groups = new Map();
for (const e of events) {
  if (e.ph !== 's' && e.ph !== 't' && e.ph !== 'f') continue;
  const g = `${e.cat}|${e.name}|${e.id}`;
  if (!groups.has(g)) groups.set(g, []);
  groups.get(g).push(e);
}
const sliceKeys = new Set(slices.map(key));
const engineFlows = new Map();  // sorted slice keys -> count
for (const flow of parsed?.Flows?.flows ?? []) {
  const k = flow.map(key).sort().join(',');
  engineFlows.set(k, (engineFlows.get(k) ?? 0) + 1);
}
let resolved = 0;
const unresolved = [];
for (const [g, points] of groups) {
  const k = points.map(key).sort().join(',');
  const ok = points.every((p) => sliceKeys.has(key(p))) && (engineFlows.get(k) ?? 0) > 0;
  if (ok) ++resolved;
  else if (unresolved.length < 5) unresolved.push(`${g}: ${points.map(key).join(' ')}`);
}

const result = {
  events: events.length,
  slices: slices.length,
  errors: errors.length,
  mis_nested: misNestedCount,
  flows: groups.size,
  flows_resolved: resolved,
  engine_flows: parsed?.Flows?.flows?.length ?? 0,
};
console.log(JSON.stringify(result));
for (const e of errors.slice(0, 5)) console.error(`error: ${e}`);
for (const m of misNested) console.error(`mis-nested: ${m}`);
for (const u of unresolved) console.error(`unresolved flow: ${u}`);
const ok = errors.length === 0 && misNestedCount === 0 && resolved === groups.size;
process.exit(ok ? 0 : 1);
