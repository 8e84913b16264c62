// Times the TypeScript reference (@context-chef/core) compiling a history file, for
// benchmarks/compile.py. Usage: node ts_reference.mjs <path-to-core-package> <history.json> <repeats>
// The package lives in a scratch folder outside the repo; nothing here is imported by contextchef.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg, historyPath, repeatsArg] = process.argv.slice(2);
const core = await import(pathToFileURL(join(pkg, "dist", "index.mjs")).href);
const { system, history } = JSON.parse(readFileSync(historyPath, "utf8"));
const repeats = Number(repeatsArg || 5);
const targets = ["openai", "openai-responses", "anthropic", "gemini"];
const silent = { warn() {}, info() {}, debug() {}, error() {} };
const out = {};
for (const target of targets) {
  const cold = [];
  const warm = [];
  for (let i = 0; i < repeats; i++) {
    const chef = new core.ContextChef({ logger: silent, vfs: { threshold: 1e12 } });
    chef.setSystemPrompt(system).setHistory(history);
    let t0 = process.hrtime.bigint();
    await chef.compile({ target });
    cold.push(Number(process.hrtime.bigint() - t0) / 1e6);
    chef.setHistory([...history, { role: "user", content: "One more thing." }]);
    t0 = process.hrtime.bigint();
    await chef.compile({ target });
    warm.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  out[target] = { cold_ms: median(cold), append_one_ms: median(warm) };
}
process.stdout.write(JSON.stringify(out));
