// Writes rows with LangGraphJS's JsonPlusSerializer (run from a directory where
// @langchain/langgraph-checkpoint and @langchain/core are installed).
// Usage: node gen_js.mjs OUT.jsonl
import { createRequire } from "module";
import fs from "fs";
import path from "path";
const require = createRequire(path.join(process.cwd(), "noop.js"));
let { JsonPlusSerializer } = require("@langchain/langgraph-checkpoint");
if (JsonPlusSerializer === undefined) {
  // Old releases (0.0.x) do not export it; load the module file itself.
  ({ JsonPlusSerializer } = require(
    path.join(process.cwd(), "node_modules/@langchain/langgraph-checkpoint/dist/serde/jsonplus.cjs"),
  ));
}
const msgs = require("@langchain/core/messages");
const { Document } = require("@langchain/core/documents");
const cpVersion = JSON.parse(fs.readFileSync(path.join(process.cwd(), "node_modules/@langchain/langgraph-checkpoint/package.json"))).version;
const coreVersion = JSON.parse(fs.readFileSync(path.join(process.cwd(), "node_modules/@langchain/core/package.json"))).version;
const writer = `js @langchain/langgraph-checkpoint@${cpVersion} @langchain/core@${coreVersion}`;

const values = {
  human: new msgs.HumanMessage({ content: "hi", id: "h1" }),
  ai_tool_calls: new msgs.AIMessage({
    content: "",
    id: "a1",
    tool_calls: [{ name: "search", args: { q: "x" }, id: "c1", type: "tool_call" }],
  }),
  ai_plain: new msgs.AIMessage({ content: "hello", name: "bot" }),
  system: new msgs.SystemMessage("be nice"),
  tool: new msgs.ToolMessage({ content: "42", tool_call_id: "c1" }),
  chat: new msgs.ChatMessage({ content: "c", role: "critic" }),
  ai_chunk: new msgs.AIMessageChunk({ content: "par", id: "ch1" }),
  human_blocks: new msgs.HumanMessage({ content: [{ type: "text", text: "t" }] }),
  // List content, as multimodal and tool-using models return it.
  ai_blocks: new msgs.AIMessage({
    content: [
      { type: "text", text: "Let me search." },
      { type: "tool_use", id: "c1", name: "search", input: { q: "x" } },
    ],
    id: "a2",
    tool_calls: [{ name: "search", args: { q: "x" }, id: "c1", type: "tool_call" }],
  }),
  remove: new msgs.RemoveMessage({ id: "r1" }),
  document: new Document({ pageContent: "page", metadata: { source: "s" } }),
  undefined_field: { a: undefined, b: [undefined, 1] },
  set: new Set([1, "two"]),
  map: new Map([["k", 1]]),
  regexp: /a+b/gi,
  error: new Error("boom"),
  uint8array: new Uint8Array([0, 1, 255]),
  date: new Date(Date.UTC(2024, 4, 1, 12, 0, 0)),
  lone_surrogate: { s: "a\ud800b", t: "\udc00" },
  big_number: { n: 1e21, i: 9007199254740993n.toString(), f: 0.1 },
  state: {
    messages: [new msgs.HumanMessage({ content: "q", id: "h" }), new msgs.AIMessage({ content: "a", id: "a" })],
    count: 3,
    nested: { list: [1, [2, [3]]], none: null },
  },
};

const serde = new JsonPlusSerializer();
const out = [];
for (const [label, value] of Object.entries(values)) {
  const [type, data] = await serde.dumpsTyped(value);
  out.push(JSON.stringify({ writer, label, type, data: Buffer.from(data).toString("base64") }));
}
fs.writeFileSync(process.argv[2], out.join("\n") + "\n");
console.error(`${writer}: ${out.length} rows`);
