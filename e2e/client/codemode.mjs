// End-to-end checks of the Code Mode surface (`codecall serve --upstreams
// FILE --surface codemode`) in front of the npm reference servers
// (everything, filesystem, memory), through the official MCP TypeScript
// SDK client.
//
//   node codemode.mjs --dir DIR stdio COMMAND [ARG...]
//   node codemode.mjs --dir DIR http URL
//
// DIR is the directory the filesystem server may use. Progress goes to
// stderr; the last stdout line is a JSON summary ({"ok": true, ...}).

import { isDeepStrictEqual, inspect } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 60_000;
const SERVERS = ["everything", "filesystem", "memory"];
const NOTE = "written through codemode.run";
let checks = 0;
let currentStep = "start";

const show = (v) => inspect(v, { depth: 6, breakLength: Infinity, maxStringLength: 600 });
const log = (line) => process.stderr.write(`codemode client: ${line}\n`);
function step(name) { currentStep = name; log(`== ${name}`); }
function check(name, cond, detail) {
  checks++;
  if (!cond) throw new Error(`check failed: ${currentStep}: ${name}: ${typeof detail === "function" ? detail() : detail ?? "false"}`);
}

function parseArgs(argv) {
  if (argv[0] !== "--dir" || argv.length < 4) throw new Error("usage: codemode.mjs --dir DIR (stdio COMMAND [ARG...] | http URL)");
  return { dir: argv[1], mode: argv[2], target: argv.slice(3) };
}

// answer returns codemode.run's answer after checking its shape (§3.3):
// never isError, structuredContent repeated as the single text block, and
// every required field present.
function answer(what, res) {
  check(`${what} is not isError`, res?.isError !== true, () => show(res));
  check(`${what} has structuredContent`, res.structuredContent && typeof res.structuredContent === "object", () => show(res));
  const text = (res.content ?? []).filter((c) => c.type === "text");
  check(`${what} repeats it as one text block`, text.length === 1 && isDeepStrictEqual(JSON.parse(text[0].text), res.structuredContent),
    () => show(res.content));
  const out = res.structuredContent;
  check(`${what} has logs, result, diagnostics, toolTrace and runId`, Array.isArray(out.logs) && "result" in out &&
    Array.isArray(out.diagnostics) && Array.isArray(out.toolTrace) && typeof out.runId === "string" && out.runId !== "", () => show(out));
  return out;
}

// The main script: two server modules, calls across both in Promise.all,
// a failing call caught as a ToolCallError, discovery, and the result.
function mainScript(dir) {
  return `import * as fs from "@codemode/servers/filesystem";
import * as everything from "@codemode/servers/everything";
import { ToolCallError } from "@codemode/errors";
import { listServers, searchTools } from "@codemode/discovery";

const dir = ${JSON.stringify(dir)};
const path = dir + "/codemode-note.txt";
const written = await fs.write_file({ path, content: ${JSON.stringify(NOTE)} });
const [file, sum, echo] = await Promise.all([
  fs.read_text_file({ path }),
  everything.get_sum({ a: 2, b: 3 }),
  everything.echo({ message: "from codemode" }),
]);
let denied = null;
try {
  await fs.read_text_file({ path: dir + "/../outside.txt" });
} catch (e) {
  denied = { toolCallError: e instanceof ToolCallError, error: e instanceof Error, name: e.name, code: e.code,
    hint: e.hint, message: e.message };
}
const missing = await fs.read_text_file({ path: dir + "/no-such-file.txt" }).then(
  () => null, (e) => ({ toolCallError: e instanceof ToolCallError, code: e.code, hint: e.hint }));
const [servers, hits] = await Promise.all([listServers(), searchTools("write text to a file", { detail: "name", limit: 5 })]);
console.log("servers:", servers.length);
globalThis.__codemode_result__ = {
  written, file, sum, echo, denied, missing,
  servers: servers.map((s) => s.serverId),
  hits: hits.results.map((h) => ({ serverId: h.serverId, toolName: h.toolName, exportName: h.exportName })),
  meta: [fs.__meta__.serverId, everything.__meta__.serverId],
  exported: fs.__meta__.tools.find((t) => t.toolName === "filesystem.write_file")?.exportName,
};
`;
}

async function run(opts) {
  const client = new Client({ name: "codecall-codemode-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  // The person at the keyboard: the built-in policy asks before any call
  // of a tool that is not declared read-only.
  const prompts = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    prompts.push(req.params.message);
    return { action: "accept", content: { decision: "approve" } };
  });
  const transport = opts.mode === "stdio"
    ? new StdioClientTransport({ command: opts.target[0], args: opts.target.slice(1), stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(opts.target[0]));
  const runCode = async (what, code) =>
    answer(what, await client.callTool({ name: "codemode.run", arguments: { code } }, undefined, { timeout: TIMEOUT_MS }));

  step("connect");
  await client.connect(transport, { timeout: TIMEOUT_MS });
  const caps = client.getServerCapabilities() ?? {};
  check("the gateway offers tools, prompts and resources", caps.tools && caps.prompts && caps.resources, () => show(caps));

  step("tools/list");
  const tools = (await client.listTools({}, { timeout: TIMEOUT_MS })).tools;
  const listed = tools.map((t) => t.name);
  check("the Code Mode surface lists exactly codemode.run", isDeepStrictEqual(listed, ["codemode.run"]), () => show(listed));
  const runTool = tools[0];
  check("codemode.run takes code", runTool.inputSchema?.type === "object" && runTool.inputSchema.properties?.code?.type === "string" &&
    runTool.inputSchema.required?.includes("code"), () => show(runTool.inputSchema));
  check("its description names the server modules", SERVERS.every((s) => runTool.description.includes(s)) &&
    runTool.description.includes("@codemode/servers/"), () => runTool.description);

  step("prompts/get codemode");
  const promptNames = (await client.listPrompts({}, { timeout: TIMEOUT_MS })).prompts.map((p) => p.name);
  check("prompts/list offers codemode", promptNames.includes("codemode"), () => show(promptNames));
  const prompt = await client.getPrompt({ name: "codemode" }, { timeout: TIMEOUT_MS });
  const system = prompt.messages?.[0]?.content?.text ?? "";
  check("the prompt is the Code Mode system prompt", prompt.messages.length === 1 && system.startsWith("# Code Mode") &&
    system.includes("codemode.run") && system.includes("__codemode_result__"), () => show(prompt));
  check("it documents restrictions, limits, capabilities and unwrapping", ["## Restrictions and deviations", "## Limits",
    "## Capabilities", "## Results of tool calls", "timeoutMs", "maxToolCalls"].every((s) => system.includes(s)), () => system);
  check("its capability identifiers are the upstream ids", SERVERS.every((s) => system.includes(s)), () => system);

  step("resources/read codemode://types/<id>.d.ts");
  const templates = (await client.listResourceTemplates({}, { timeout: TIMEOUT_MS })).resourceTemplates.map((t) => t.uriTemplate);
  check("the types template is offered", templates.includes("codemode://types/{serverId}.d.ts"), () => show(templates));
  const declarations = {};
  for (const [id, exports] of [["filesystem", ["write_file", "read_text_file"]], ["everything", ["get_sum", "echo"]], ["memory", ["create_entities"]]]) {
    const uri = `codemode://types/${id}.d.ts`;
    const res = await client.readResource({ uri }, { timeout: TIMEOUT_MS });
    const text = res.contents?.[0]?.text ?? "";
    declarations[id] = text.length;
    check(`${uri} declares the module`, res.contents.length === 1 && res.contents[0].uri === uri &&
      text.includes(`declare module "@codemode/servers/${id}"`), () => show(res));
    check(`${uri} exports ${exports.join(", ")} and __meta__`, exports.every((e) => new RegExp(`export function ${e}\\(`).test(text)) &&
      text.includes("__meta__"), () => text);
  }
  let unknownType = null;
  try {
    await client.readResource({ uri: "codemode://types/nope.d.ts" }, { timeout: TIMEOUT_MS });
  } catch (e) {
    unknownType = e;
  }
  check("an unknown server id is an error naming the connected ones", unknownType && /nope/.test(unknownType.message) &&
    /filesystem/.test(unknownType.message), () => show(unknownType));

  step("codemode.run across filesystem and everything");
  const out = await runCode("the main script", mainScript(opts.dir));
  const errors = out.diagnostics.filter((d) => d.severity === "error");
  check("the script ran without error diagnostics", errors.length === 0 && out.result !== null, () => show(out));
  const r = out.result;
  check("the write went through, unwrapped from structuredContent", isDeepStrictEqual(r.written, { content: `Successfully wrote to ${opts.dir}/codemode-note.txt` }),
    () => show(r.written));
  check("the file reads back", isDeepStrictEqual(r.file, { content: NOTE }), () => show(r.file));
  check("everything answered in the same Promise.all, a single text block unwrapped to its text",
    r.sum === "The sum of 2 and 3 is 5." && r.echo === "Echo: from codemode", () => show([r.sum, r.echo]));
  check("a path outside the allowed directory rejects with a ToolCallError", r.denied?.toolCallError === true && r.denied.error === true &&
    r.denied.name === "ToolCallError" && typeof r.denied.code === "string" && r.denied.code !== "", () => show(r.denied));
  check("the error carries the upstream's reason and a hint", /access denied/i.test(r.denied.message) &&
    typeof r.denied.hint === "string" && r.denied.hint.length > 0, () => show(r.denied));
  check("a missing file rejects with a ToolCallError too", r.missing?.toolCallError === true && typeof r.missing.hint === "string" &&
    r.missing.hint.length > 0, () => show(r.missing));
  check("listServers gives the three upstreams", isDeepStrictEqual([...r.servers].sort(), SERVERS), () => show(r.servers));
  check("searchTools finds filesystem.write_file with its server id", r.hits.some((h) => h.serverId === "filesystem" &&
    h.toolName === "filesystem.write_file" && h.exportName === "write_file"), () => show(r.hits));
  check("__meta__ carries each module's serverId and export names", isDeepStrictEqual(r.meta, ["filesystem", "everything"]) &&
    r.exported === "write_file", () => show([r.meta, r.exported]));
  check("console output is captured", out.logs.some((l) => l.level === "log" && l.message === "servers: 3" && Number.isInteger(l.timeMs)),
    () => show(out.logs));
  check("a person approved the destructive write, once", prompts.length === 1 && prompts[0].includes("filesystem.write_file"), () => show(prompts));

  const trace = out.toolTrace;
  const calls = trace.map((t) => `${t.serverId} ${t.toolName} ${t.ok}`).sort();
  check("toolTrace names each call's server id and canonical tool name", isDeepStrictEqual(calls, [
    "everything everything.echo true",
    "everything everything.get-sum true",
    "filesystem filesystem.read_text_file false",
    "filesystem filesystem.read_text_file false",
    "filesystem filesystem.read_text_file true",
    "filesystem filesystem.write_file true",
  ]), () => show(trace));
  check("toolTrace has integer durations, errors for failed calls and no inputs or outputs",
    trace.every((t) => Number.isInteger(t.durationMs) && (t.ok || typeof t.error === "string") && !("input" in t) && !("output" in t) &&
      !("result" in t)), () => show(trace));

  step("a script with a syntax error");
  const syntax = await runCode("the syntax error", `import * as fs from "@codemode/servers/filesystem";\nconst x = ;\n`);
  check("it is a SYNTAX_ERROR diagnostic with a location and a hint, result null", syntax.result === null &&
    syntax.diagnostics.some((d) => d.severity === "error" && d.code === "SYNTAX_ERROR" && /^script\.js:2:\d+$/.test(d.path) && d.hint) &&
    syntax.toolTrace.length === 0, () => show(syntax));

  step("a script with an unknown import");
  const unknown = await runCode("the unknown import", `import * as nope from "@codemode/servers/nope";\nglobalThis.__codemode_result__ = 1;\n`);
  check("it is an IMPORT_FAILURE diagnostic with ServerNotFoundError, result null", unknown.result === null &&
    unknown.diagnostics.some((d) => d.severity === "error" && d.code === "IMPORT_FAILURE" && d.errorClass === "ServerNotFoundError" &&
      d.message.includes("@codemode/servers/nope") && d.hint), () => show(unknown));

  step("an uncaught ToolCallError");
  const uncaught = await runCode("the uncaught error", `import * as fs from "@codemode/servers/filesystem";
console.log("before");
globalThis.__codemode_result__ = await fs.read_text_file({ path: "/no/such/dir/file.txt" });
`);
  check("it is an UNCAUGHT_EXCEPTION diagnostic with errorClass ToolCallError, result null, logs and trace kept",
    uncaught.result === null && uncaught.diagnostics.some((d) => d.code === "UNCAUGHT_EXCEPTION" && d.errorClass === "ToolCallError") &&
    uncaught.logs.some((l) => l.message === "before") &&
    uncaught.toolTrace.length === 1 && uncaught.toolTrace[0].serverId === "filesystem" && uncaught.toolTrace[0].ok === false,
  () => show(uncaught));

  step("close");
  const stillListed = (await client.listTools({}, { timeout: TIMEOUT_MS })).tools.map((t) => t.name);
  check("tools/list is unchanged", isDeepStrictEqual(stillListed, listed), () => show(stillListed));
  const server = client.getServerVersion();
  await client.close();
  return { transport: opts.mode, server, listedTools: listed, declarationBytes: declarations, result: r, toolTrace: trace };
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (err) {
  process.stdout.write(JSON.stringify({ ok: false, error: err.message }) + "\n");
  process.exit(2);
}
try {
  const summary = await run(opts);
  process.stdout.write(JSON.stringify({ ok: true, ...summary, checks }) + "\n");
  process.exit(0);
} catch (err) {
  log(`FAIL ${err?.stack ?? err}`);
  process.stdout.write(JSON.stringify({ ok: false, transport: opts.mode, step: currentStep, error: err?.message ?? String(err), checks }) + "\n");
  process.exit(1);
}
