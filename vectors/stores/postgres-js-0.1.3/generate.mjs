// Writes dump.sql (pg_dump --inserts of a fresh database) with LangGraphJS's PostgresSaver
// (@langchain/langgraph-checkpoint-postgres, versions in package-lock.json: its own
// migrations, checkpoint_migrations v = 0..4), plus what that saver reads back
// (reads.json); rows.json is made by ../common.py's postgres_rows (see README.md).
//
//   npm ci && node generate.mjs [SERVER_URL]   # default postgresql://postgres@127.0.0.1:55432
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import * as langgraph from "@langchain/langgraph";
import * as messages from "@langchain/core/messages";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { reads, runThreads, versions, writeJson } from "../common.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const server = process.argv[2] ?? "postgresql://postgres@127.0.0.1:55432";
const db = (process.env.FIXTURE_PG_DB_PREFIX ?? "") + "h_old_gen_postgres_js_0_1_3";
const admin = new pg.Client({ connectionString: `${server}/postgres` });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${db}"`);
await admin.query(`CREATE DATABASE "${db}"`);
await admin.end();
const url = `${server}/${db}`;
const saver = PostgresSaver.fromConnString(url);
await saver.setup();
const threads = await runThreads(saver, langgraph, messages);
writeJson(path.join(here, "reads.json"), {
  versions: versions(here, [
    "@langchain/langgraph",
    "@langchain/langgraph-checkpoint",
    "@langchain/langgraph-checkpoint-postgres",
    "@langchain/core",
    "pg",
  ]),
  threads: await reads(saver, threads),
});
await saver.end();
const sql = execFileSync("pg_dump", ["--inserts", "--no-owner", "--no-privileges", "--no-comments", url], {
  encoding: "utf8",
});
fs.writeFileSync(
  path.join(here, "dump.sql"),
    // The version banner and psql's `\\restrict KEY` guard lines (a random key) go, so
  // the dump is stable plain SQL (same as ../common.py's pg_dump).
  sql
    .split("\n")
    .filter((l) => !l.startsWith("-- Dumped ") && !l.startsWith("\\restrict ") && !l.startsWith("\\unrestrict "))
    .join("\n"),
);
