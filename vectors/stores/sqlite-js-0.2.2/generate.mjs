// Writes store.sqlite with LangGraphJS's SqliteSaver (@langchain/langgraph-checkpoint-sqlite,
// versions in package-lock.json), plus what that saver reads back (reads.json); rows.json
// is made by ../common.py's sqlite_rows (see README.md).
//
//   npm ci && node generate.mjs
// (better-sqlite3 11 on Node 20.)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import * as langgraph from "@langchain/langgraph";
import * as messages from "@langchain/core/messages";
import { reads, runThreads, versions, writeJson } from "../common.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(here, "store.sqlite");
for (const s of ["", "-wal", "-shm"]) fs.rmSync(file + s, { force: true });
const db = new Database(file);
const saver = new SqliteSaver(db);
const threads = await runThreads(saver, langgraph, messages);
writeJson(path.join(here, "reads.json"), {
  versions: versions(here, [
    "@langchain/langgraph",
    "@langchain/langgraph-checkpoint",
    "@langchain/langgraph-checkpoint-sqlite",
    "@langchain/core",
    "better-sqlite3",
  ]),
  threads: await reads(saver, threads),
});
db.pragma("wal_checkpoint(TRUNCATE)");
db.close();
