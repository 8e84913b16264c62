// Times the TypeScript reference (@context-chef/core) for benchmarks/compile.py and
// benchmarks/store.py. The package lives in a scratch folder outside the repo; nothing here is
// imported by contextchef. Every mode prints one JSON object on stdout.
//
//   node ts_reference.mjs serve   <core-package> <workload.json> <turns> <warmups>
//       then one request per stdin line: "warmup:<targets,csv>" or a target; one JSON line each
//   node ts_reference.mjs rss     <core-package> <workload.json> <target> <turns>
//   node ts_reference.mjs offload <core-package> <content-file> <repeats>
//
// workload.json is {"system": [...], "history": [...], "turns": [...]} written by compile.py:
// both sides compile the same history and append the same turn messages.
//
// Configuration, so that the reference does the work contextchef does by default:
// - a char tokenizer, 4 + sum(ceil(len / 4)) per message over the texts contextchef counts,
//   with an infinite window (without one the reference estimates every compile by
//   JSON.stringify-ing the whole history);
// - offloading out of reach (vfs threshold 1e12) and an in-memory store, as the transcripts'
//   tool results are below contextchef's default threshold anyway;
// - tools: "unified", so both payloads carry the one `context` tool.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [mode, pkg, ...rest] = process.argv.slice(2);
const core = await import(pathToFileURL(join(pkg, "dist", "index.mjs")).href);
const silent = { warn() {}, info() {}, debug() {}, error() {} };

const textTokens = (text) => (text ? Math.ceil(text.length / 4) : 0);

function charTokenizer(messages) {
  let total = 0;
  for (const message of messages) {
    total += 4;
    const content = message.content;
    if (typeof content === "string") total += textTokens(content);
    else if (Array.isArray(content)) {
      for (const part of content) if (typeof part.text === "string") total += textTokens(part.text);
    }
    if (message.thinking) total += textTokens(message.thinking.thinking);
    for (const call of message.tool_calls ?? []) {
      total += textTokens(call.function.name) + textTokens(call.function.arguments);
    }
  }
  return total;
}

function newChef() {
  return new core.ContextChef({
    logger: silent,
    tools: "unified",
    store: new core.InMemoryBackend(),
    vfs: { threshold: 1e12 },
    janitor: { contextWindow: Infinity, tokenizer: charTokenizer },
  });
}

// Wall time, as on the Python side (a CPU clock would count V8's GC and compiler threads here
// and one thread there).
const now = () => process.hrtime.bigint();
const ms = (start, end) => Number(end - start) / 1e6;
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function cold(system, history, target) {
  const t0 = now();
  const chef = newChef();
  chef.setSystemPrompt(system);
  const t1 = now();
  chef.setHistory(history);
  const t2 = now();
  await chef.compile({ target });
  const t3 = now();
  const parts = { setup_ms: ms(t0, t1), set_history_ms: ms(t1, t2), compile_ms: ms(t2, t3) };
  return { chef, cold_ms: ms(t0, t3), ...parts };
}

// One chef, one message more per turn: setHistory(h + 1) then compile is the turn.
async function turns(chef, history, extra, target, fresh) {
  const turn = [];
  const compileOnly = [];
  let host = history;
  let stored = fresh ? JSON.stringify(history) : null;
  for (const message of extra) {
    let next;
    if (fresh) {
      next = JSON.parse(stored); // the host reloads its history: outside the timed region
      next.push(structuredClone(message));
    } else {
      next = [...host, message];
    }
    const t0 = now();
    chef.setHistory(next);
    const t1 = now();
    await chef.compile({ target });
    const t2 = now();
    turn.push(ms(t0, t2));
    compileOnly.push(ms(t1, t2));
    host = next;
    if (fresh) stored = JSON.stringify(next);
  }
  return { turn_ms: median(turn), compile_ms: median(compileOnly) };
}

async function benchTarget(system, history, extra, target) {
  const first = await cold(system, history, target);
  const append = await turns(first.chef, history, extra, target, false);
  const reloaded = JSON.parse(JSON.stringify(history));
  const second = await cold(system, reloaded, target);
  const fresh = await turns(second.chef, reloaded, extra, target, true);
  return {
    cold_ms: first.cold_ms,
    cold_set_history_ms: first.set_history_ms,
    cold_compile_ms: first.compile_ms,
    turn_append_ms: append.turn_ms,
    compile_alone_ms: append.compile_ms,
    turn_fresh_ms: fresh.turn_ms,
  };
}

// A long-lived process, so that the rounds interleave with contextchef's and the JIT stays warm.
async function serve([workloadPath, turnsArg, warmupsArg]) {
  const { system, history, turns: extra } = JSON.parse(readFileSync(workloadPath, "utf8"));
  const count = Number(turnsArg);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    let answer = { ok: true };
    if (line.startsWith("warmup:")) {
      // The JIT compiles the hot paths on this very workload before anything is timed.
      for (const target of line.slice(7).split(",")) {
        for (let i = 0; i < Number(warmupsArg); i++) {
          await benchTarget(system, history, extra.slice(0, 2), target);
        }
      }
    } else {
      answer = await benchTarget(system, history, extra.slice(0, count), line.trim());
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  return null;
}

async function rss([workloadPath, target, turnsArg]) {
  const { system, history, turns: extra } = JSON.parse(readFileSync(workloadPath, "utf8"));
  const { chef } = await cold(system, history, target);
  await turns(chef, history, extra.slice(0, Number(turnsArg)), target, false);
  return { max_rss_kib: peakRssKib() };
}

// VmHWM on Linux: a child's maxRSS starts from its parent's peak (Linux carries it over exec).
function peakRssKib() {
  try {
    const status = readFileSync("/proc/self/status", "utf8");
    return Number(/^VmHWM:\s+(\d+)/m.exec(status)[1]);
  } catch {
    return process.resourceUsage().maxRSS;
  }
}

async function offload([contentPath, repeatsArg]) {
  const content = readFileSync(contentPath, "utf8");
  const samples = [];
  let preview = "";
  for (let i = 0; i < Number(repeatsArg) + 2; i++) {
    // A fresh chef and store each time: offloading the same content twice is a no-op.
    const chef = new core.ContextChef({ logger: silent, store: new core.InMemoryBackend() });
    const t0 = now();
    preview = chef.offload(content, { headChars: 500, tailChars: 2000 });
    const t1 = now();
    if (i >= 2) samples.push(ms(t0, t1)); // the first two are warm-up
  }
  if (!preview.includes("context://")) throw new Error("the reference did not offload");
  return { offload_ms: median(samples), preview_chars: preview.length };
}

const modes = { serve, rss, offload };
const result = await modes[mode](rest);
if (result !== null) process.stdout.write(JSON.stringify(result));
