// Writes real LangGraphJS PostgresSaver rows and dumps what the JS saver itself reads
// back, for the Rust reader to compare with (.ci/checks.d/postgres_js.sh runs it;
// examples/postgres_js_rows.rs is the Rust half).
//
//   node write_rows.mjs URL SCHEMA OUT.json
//
// SCHEMA is set up by the JS saver's own setup() (its migrations 0..4 only). Threads:
//  - "js-graph": a real LangGraphJS graph run: messages, a Send fan-out, a subgraph
//    (namespaced checkpoints), an interrupt() resumed with Command({ resume }).
//  - "js-direct": saver.put / putWrites of varied values (nested objects, floats,
//    unicode, NUL, lone surrogates, Uint8Array, Set, Map, RegExp, Error, Date,
//    undefined, messages) and varied metadata.
// OUT.json holds, per read (getTuple of every checkpoint, the thread's latest, and
// several list() calls), what the JS saver returned in a canonical JSON form (see
// canon() below: JS-only types become tagged objects).
import fs from "node:fs";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import {
  Annotation,
  Command,
  END,
  MessagesAnnotation,
  START,
  Send,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";
import { uuid6, emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";

const [url, schema, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node write_rows.mjs URL SCHEMA OUT.json");
  process.exit(2);
}

/** What JS read, as JSON the Rust side can compare without JS types. */
function canon(v) {
  if (v === undefined) return { $undefined: true };
  if (v === null || typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) return { $float: String(v) };
    return v;
  }
  if (typeof v === "bigint") return { $bigint: v.toString() };
  if (typeof v === "string") {
    return v.isWellFormed()
      ? v
      : { $utf16: Array.from({ length: v.length }, (_, i) => v.charCodeAt(i)) };
  }
  if (v instanceof Uint8Array) return { $bytes: Array.from(v) };
  if (v instanceof Set) return { $set: Array.from(v, canon) };
  if (v instanceof Map) return { $map: Array.from(v, ([k, x]) => [canon(k), canon(x)]) };
  if (v instanceof RegExp) return { $regexp: [v.source, v.flags] };
  if (v instanceof Error) return { $error: v.message };
  if (v instanceof Date) return { $date: v.toISOString() };
  if (Array.isArray(v)) return v.map(canon);
  if (typeof v.toJSON === "function" && v.lc_serializable) {
    const j = v.toJSON();
    return { $lc: j.id, kwargs: canon(j.kwargs) };
  }
  const o = {};
  for (const [k, x] of Object.entries(v)) o[k] = canon(x);
  return o;
}

const cfgView = (c) =>
  c === undefined
    ? null
    : {
        thread_id: c.configurable.thread_id,
        checkpoint_ns: c.configurable.checkpoint_ns,
        checkpoint_id: c.configurable.checkpoint_id,
      };

const tupleView = (t) =>
  t === undefined
    ? null
    : {
        config: cfgView(t.config),
        checkpoint: canon(t.checkpoint),
        metadata: canon(t.metadata),
        parent_config: cfgView(t.parentConfig),
        pending_writes: t.pendingWrites.map(([task, ch, v]) => [task, ch, canon(v)]),
      };

const saver = PostgresSaver.fromConnString(url, { schema });
await saver.setup();

// --- a real graph run ---------------------------------------------------------
const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  fanout: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  answer: Annotation(),
});
const Sub = Annotation.Root({ ...MessagesAnnotation.spec });
const subgraph = new StateGraph(Sub)
  .addNode("sub_step", () => ({ messages: [new AIMessage({ content: "from the subgraph", id: "sub-1" })] }))
  .addEdge(START, "sub_step")
  .addEdge("sub_step", END)
  .compile();
const graph = new StateGraph(State)
  .addNode("agent", () => ({
    messages: [
      new AIMessage({
        content: "calling a tool",
        id: "ai-1",
        tool_calls: [{ id: "call-1", name: "lookup", args: { q: "ünïcode", n: 3, x: 1.5 } }],
      }),
    ],
  }))
  .addNode("tool", () => ({
    messages: [new ToolMessage({ content: "42", tool_call_id: "call-1", id: "tool-1" })],
  }))
  .addNode("worker", (s) => ({ fanout: [`done ${s.item}`] }))
  .addNode("sub", subgraph)
  .addNode("ask", () => {
    const answer = interrupt({ question: "continue?", options: ["yes", "no"] });
    return { answer, messages: [new HumanMessage({ content: `answer: ${answer}`, id: "human-2" })] };
  })
  .addEdge(START, "agent")
  .addEdge("agent", "tool")
  .addConditionalEdges("tool", () => [new Send("worker", { item: "a" }), new Send("worker", { item: "b" })])
  .addEdge("worker", "sub")
  .addEdge("sub", "ask")
  .addEdge("ask", END)
  .compile({ checkpointer: saver });
const gcfg = { configurable: { thread_id: "js-graph" } };
await graph.invoke({ messages: [new HumanMessage({ content: "hi from js", id: "human-1" })] }, gcfg);
const final = await graph.invoke(new Command({ resume: "yes" }), gcfg);
if (final.answer !== "yes" || final.fanout.length !== 2) {
  throw new Error(`graph did not finish as expected: ${JSON.stringify(final)}`);
}

// --- direct puts of varied values -------------------------------------------------
const values = {
  nested: { a: [1, 2.5, -0, 1e21, 1e-7, Number.MAX_SAFE_INTEGER], b: { "": null, "ключ": "значение" } },
  text: "emoji 🎉 and NUL \u0000 inside",
  lone: "lone \ud800 surrogate",
  bytes_nested: { raw: new Uint8Array([0, 1, 254, 255]) },
  set: new Set([1, "two", 3]),
  map: new Map([["k", 1], ["j", [2]]]),
  regexp: /a+b/gi,
  error: new Error("boom"),
  date: new Date(Date.UTC(2024, 6, 1, 12, 30, 0, 123)),
  undef: { present: 1, missing: undefined },
  messages: [new HumanMessage({ content: [{ type: "text", text: "part" }], id: "m-1", name: "alice" })],
  empty_string: "",
  big_array: Array.from({ length: 50 }, (_, i) => i * i),
};
const bytesTop = new Uint8Array([104, 105, 0, 255]);
const direct = { configurable: { thread_id: "js-direct", checkpoint_ns: "" } };
let parent = direct;
let versions = {};
const ids = [];
for (let step = 0; step < 3; step += 1) {
  const cp = emptyCheckpoint();
  cp.id = uuid6(step);
  ids.push(cp.id);
  cp.ts = new Date(Date.UTC(2024, 6, 1, 0, 0, step)).toISOString();
  const newVersions = {};
  const channelValues = {};
  if (step === 0) {
    for (const [k, v] of Object.entries(values)) {
      newVersions[k] = 1;
      channelValues[k] = v;
    }
    newVersions.bytes_top = 1;
    channelValues.bytes_top = bytesTop;
    newVersions.no_value = 1; // a version without a value: an "empty" blob row
  } else {
    newVersions.counter = step;
    channelValues.counter = step * 10;
  }
  versions = { ...versions, ...newVersions };
  cp.channel_versions = { ...versions };
  cp.channel_values = channelValues;
  cp.versions_seen = { node: { counter: step } };
  const metadata = {
    source: step === 0 ? "input" : "loop",
    step: step - 1,
    parents: {},
    writes: step === 0 ? { __start__: { greeting: "héllo", n: [1, 2.5] } } : null,
    score: 0.25 * step,
    flag: step % 2 === 0,
    nested: { deep: { deeper: ["x", { y: null }] } },
  };
  parent = await saver.put(parent, cp, metadata, newVersions);
}
await saver.putWrites(parent, [["counter", 7], ["note", { to: "rust", when: new Date(0) }]], "task-a");
await saver.putWrites(parent, [["__error__", "a failure"], ["set", new Set(["s"])]], "task-b");
await saver.putWrites({ configurable: { ...parent.configurable } }, [["__interrupt__", [{ value: "stop", id: "int-1" }]]], "task-c");

// --- what the JS saver reads back --------------------------------------------------
const reads = [];
async function listed(label, config, options) {
  const got = [];
  for await (const t of saver.list(config, options)) got.push(tupleView(t));
  reads.push({ kind: "list", label, config: config ? config.configurable : null, options: options ?? {}, tuples: got });
  return got;
}
for (const thread of ["js-graph", "js-direct"]) {
  const all = await listed(`${thread} all`, { configurable: { thread_id: thread } });
  for (const t of all) {
    const c = { configurable: t.config };
    reads.push({ kind: "get", label: `get ${t.config.checkpoint_ns}/${t.config.checkpoint_id}`, config: t.config, tuple: tupleView(await saver.getTuple(c)) });
  }
  reads.push({ kind: "get", label: `${thread} latest`, config: { thread_id: thread, checkpoint_ns: "" }, tuple: tupleView(await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: "" } })) });
  await listed(`${thread} root ns, limit 2`, { configurable: { thread_id: thread, checkpoint_ns: "" } }, { limit: 2 });
  await listed(`${thread} source=loop`, { configurable: { thread_id: thread } }, { filter: { source: "loop" } });
}
await listed("js-direct before the last", { configurable: { thread_id: "js-direct" } }, { before: { configurable: { checkpoint_id: ids[2] } } });
const nss = new Set();
for (const r of reads) if (r.kind === "get" && r.tuple) nss.add(r.tuple.config.checkpoint_ns);
for (const ns of [...nss].filter((n) => n !== "")) {
  await listed(`js-graph ns ${ns}`, { configurable: { thread_id: "js-graph", checkpoint_ns: ns } });
}
await saver.end();
fs.writeFileSync(out, JSON.stringify({ schema, reads }, null, 1));
const nGets = reads.filter((r) => r.kind === "get").length;
console.log(`js: wrote threads js-graph and js-direct in schema ${schema}; ${nGets} getTuple and ${reads.length - nGets} list reads dumped to ${out}`);
