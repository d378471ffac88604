// Shared by the LangGraphJS fixture generators here (each installs its own pinned
// packages: `npm ci` in its directory). canon() is the same JSON form of JS values as
// vectors/postgres/js/write_rows.mjs uses; runThreads() is the JS twin of common.py's
// graph: messages, a Date in the state, an interrupt() resumed with Command, a subgraph.
import fs from "node:fs";

export const WHEN = new Date(Date.UTC(2024, 6, 1, 12, 30, 45, 123));

export function canon(v) {
  if (v === undefined) return { $undefined: true };
  if (v === null || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : { $float: String(v) };
  if (typeof v === "bigint") return { $bigint: v.toString() };
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString("base64") };
  if (v instanceof Set) return { $set: Array.from(v, canon) };
  if (v instanceof Map) return { $map: Array.from(v, ([k, x]) => [canon(k), canon(x)]) };
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

const cfgView = (c) => (c === undefined ? null : canon(c.configurable));

export const tupleView = (t) =>
  t === undefined
    ? null
    : {
        config: cfgView(t.config),
        checkpoint: canon(t.checkpoint),
        metadata: canon(t.metadata),
        parent_config: cfgView(t.parentConfig),
        pending_writes: (t.pendingWrites ?? []).map(([task, ch, v]) => [task, ch, canon(v)]),
      };

/** Runs the fixture graph on threads t-main (interrupted, resumed) and t-short
 * (interrupted, left pending) with `saver`; returns the thread ids. `langgraph` and
 * `messages` are the caller's `@langchain/langgraph` and `@langchain/core/messages`
 * (imports resolve from the generator's own node_modules). */
export async function runThreads(saver, langgraph, messages) {
  const { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } = langgraph;
  const { AIMessage, HumanMessage, ToolMessage } = messages;
  const State = Annotation.Root({
    ...MessagesAnnotation.spec,
    when: Annotation(),
    steps: Annotation(),
  });
  const Sub = Annotation.Root({ ...MessagesAnnotation.spec });
  const sub = new StateGraph(Sub)
    .addNode("note", () => ({ messages: [new AIMessage({ content: "(noted by the subgraph)", id: "sub-1" })] }))
    .addEdge(START, "note")
    .addEdge("note", END)
    .compile();
  const graph = new StateGraph(State)
    .addNode("agent", (s) => {
      if (s.messages.some((m) => m.getType() === "tool")) {
        return { messages: [new AIMessage({ content: "It is sunny in Paris.", id: "ai-2" })], steps: (s.steps ?? 0) + 1 };
      }
      return {
        messages: [
          new AIMessage({ content: "", id: "ai-1", tool_calls: [{ name: "weather", args: { city: "Paris" }, id: "call-1" }] }),
        ],
        when: WHEN,
        steps: (s.steps ?? 0) + 1,
      };
    })
    .addNode("tools", () => {
      const answer = interrupt({ question: "run weather?", asked_at: WHEN });
      return { messages: [new ToolMessage({ content: String(answer), tool_call_id: "call-1", id: "tool-1" })] };
    })
    .addNode("after", sub)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => (s.messages.at(-1).tool_calls?.length ? "tools" : "after"), ["tools", "after"])
    .addEdge("tools", "agent")
    .addEdge("after", END)
    .compile({ checkpointer: saver });
  for (const t of ["t-main", "t-short"]) {
    const cfg = { configurable: { thread_id: t, user: "ada", requested_at: WHEN } };
    await graph.invoke({ messages: [new HumanMessage({ content: "Weather in Paris?", id: "h-1" })], steps: 0 }, cfg);
    if (t === "t-main") await graph.invoke(new Command({ resume: "sunny" }), cfg);
  }
  return ["t-main", "t-short"];
}

/** list() of each thread (every namespace), then getTuple() of every listed config. */
export async function reads(saver, threads) {
  const out = {};
  for (const t of threads) {
    const listed = [];
    for await (const x of saver.list({ configurable: { thread_id: t } })) listed.push(x);
    const got = [];
    for (const x of listed) got.push(tupleView(await saver.getTuple(x.config)));
    out[t] = { list: listed.map(tupleView), get_tuple: got };
  }
  return out;
}

export function writeJson(path, obj) {
  fs.writeFileSync(path, JSON.stringify(obj, null, 1) + "\n");
}

export function versions(dir, names) {
  const out = { node: process.version };
  for (const n of names) {
    out[n] = JSON.parse(fs.readFileSync(`${dir}/node_modules/${n}/package.json`, "utf8")).version;
  }
  return out;
}
