// End-to-end checks of `codecall serve --upstreams` in front of the npm
// reference servers (everything, filesystem, memory), through the official
// MCP TypeScript SDK client.
//
//   node gateway.mjs --dir DIR stdio COMMAND [ARG...]
//   node gateway.mjs --dir DIR http URL
//   node gateway.mjs --progress stdio COMMAND [ARG...]
//
// DIR is the directory the filesystem server may use. --progress instead
// checks that the everything server's progress notifications reach the
// client through the gateway, on a gateway configured to list
// everything.trigger-long-running-operation. Progress goes to
// stderr; the last stdout line is a JSON summary ({"ok": true, ...}).

import { isDeepStrictEqual, inspect } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 60_000;
const META = ["codecall.describe", "codecall.execute", "codecall.search"];
let checks = 0;
let currentStep = "start";

const show = (v) => inspect(v, { depth: 6, breakLength: Infinity, maxStringLength: 600 });
const log = (line) => process.stderr.write(`gateway client: ${line}\n`);
function step(name) { currentStep = name; log(`== ${name}`); }
function check(name, cond, detail) {
  checks++;
  if (!cond) throw new Error(`check failed: ${currentStep}: ${name}: ${typeof detail === "function" ? detail() : detail ?? "false"}`);
}

function parseArgs(argv) {
  if (argv[0] === "--progress" && argv.length >= 3) return { progress: true, mode: argv[1], target: argv.slice(2) };
  if (argv[0] !== "--dir" || argv.length < 4) throw new Error("usage: gateway.mjs (--dir DIR | --progress) (stdio COMMAND [ARG...] | http URL)");
  return { dir: argv[1], mode: argv[2], target: argv.slice(3) };
}

// structured returns a meta-tool's structuredContent after checking it
// matches its text block.
function structured(what, res) {
  check(`${what} has structuredContent`, res?.structuredContent && typeof res.structuredContent === "object", () => show(res));
  const text = (res.content ?? []).filter((c) => c.type === "text");
  check(`${what} repeats it as one text block`, text.length === 1 && isDeepStrictEqual(JSON.parse(text[0].text), res.structuredContent),
    () => show(res.content));
  return res.structuredContent;
}

async function run(opts) {
  const client = new Client({ name: "codecall-gateway-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  // The person at the keyboard: CodeCall's built-in policy asks before
  // any call of a tool that is not declared read-only or non-destructive.
  const prompts = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    prompts.push(req.params.message);
    return { action: "accept", content: { decision: "approve" } };
  });
  const transport = opts.mode === "stdio"
    ? new StdioClientTransport({ command: opts.target[0], args: opts.target.slice(1), stderr: "inherit", env: stateEnv() })
    : new StreamableHTTPClientTransport(new URL(opts.target[0]));
  const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });

  step("connect");
  await client.connect(transport, { timeout: TIMEOUT_MS });
  check("the gateway offers tools", client.getServerCapabilities()?.tools, () => show(client.getServerCapabilities()));

  if (opts.progress) return runProgress(client);

  step("tools/list");
  const listed = (await client.listTools({}, { timeout: TIMEOUT_MS })).tools.map((t) => t.name).sort();
  check("codecall_only lists the meta-tools only", isDeepStrictEqual(listed, META), () => show(listed));

  step("search across the three apps");
  const search = async (query, filter) => structured(`search ${query}`, await call("codecall.search", { query, topK: 5, ...(filter ? { filter } : {}) }));
  for (const [query, want] of [
    ["write text to a file", "filesystem.write_file"],
    ["create entities in the knowledge graph", "memory.create_entities"],
    ["add two numbers and return the sum", "everything.get-sum"],
  ]) {
    const out = await search(query);
    const names = out.tools.map((t) => t.name);
    check(`"${query}" finds ${want} in the top 3`, names.slice(0, 3).includes(want), () => show(out.tools));
    const hit = out.tools.find((t) => t.name === want);
    check(`${want} carries appId and source`, hit.appId === want.split(".")[0] && hit.source === "upstream", () => show(hit));
  }
  const apps = new Set((await search("read")).tools.map((t) => t.appId));
  check("an unfiltered search reaches several apps", apps.size >= 2, () => show([...apps]));
  for (const app of ["filesystem", "memory", "everything"]) {
    const out = await search("read or list items", { appIds: [app] });
    check(`appIds [${app}] returns only ${app} tools`, out.tools.length > 0 && out.tools.every((t) => t.appId === app), () => show(out.tools));
  }

  step("describe");
  const described = structured("describe", await call("codecall.describe", { tools: ["filesystem.write_file", "memory.create_entities"], format: "both" }));
  const byName = Object.fromEntries(described.tools.map((t) => [t.name, t]));
  check("write_file's schema comes from the upstream", byName["filesystem.write_file"]?.inputSchema?.properties?.path &&
    byName["filesystem.write_file"].inputSchema.properties.content, () => show(described));
  check("create_entities's schema comes from the upstream", byName["memory.create_entities"]?.inputSchema?.properties?.entities, () => show(described));
  check("describe gives TypeScript declarations", described.tools.every((t) => t.typescript.includes(t.name)), () => show(described));

  step("execute a plan across filesystem and memory");
  const script = `
    const path = codecallContext.dir + "/codecall-note.txt";
    await callTool("filesystem.write_file", {path, content: "written through the gateway"});
    await callTool("memory.create_entities", {entities: [{name: "codecall-note", entityType: "file", observations: ["stored at " + path]}]});
    const [file, graph] = await Promise.all([
      callTool("filesystem.read_text_file", {path}),
      callTool("memory.open_nodes", {names: ["codecall-note"]}),
    ]);
    const text = typeof file === "string" ? file : file.content;
    const entity = graph.entities[0];
    return {text, entity: entity.name, observation: entity.observations[0], sameFile: entity.observations[0].endsWith(path)};`;
  const out = structured("execute", await call("codecall.execute", { script, context: { dir: opts.dir } }));
  check("the plan succeeds", out.status === "ok", () => show(out));
  check("a person approved the destructive write first", prompts.length === 1 && prompts[0].includes("filesystem.write_file") &&
    prompts[0].includes("may delete or overwrite data"), () => show(prompts));
  check("reads declared read-only were not asked about", !prompts.some((p) => p.includes("filesystem.read_text_file")), () => show(prompts));
  check("the plan returns the joined result", out.result.text === "written through the gateway" && out.result.entity === "codecall-note" &&
    out.result.sameFile === true, () => show(out.result));
  check("toolTrace lists the four calls, all ok", out.toolTrace.length === 4 && out.toolTrace.every((t) => t.ok) &&
    isDeepStrictEqual(out.toolTrace.map((t) => t.toolName).sort(),
      ["filesystem.read_text_file", "filesystem.write_file", "memory.create_entities", "memory.open_nodes"]), () => show(out.toolTrace));

  step("a plan with bad input is refused before it reaches the upstream");
  const bad = structured("execute bad input", await call("codecall.execute", {
    script: `return await callTool("everything.get-sum", {a: "not a number", b: 2});` }));
  check("status is tool_error from the tool", bad.status === "tool_error" && bad.error.source === "tool" &&
    bad.error.toolName === "everything.get-sum", () => show(bad));
  check("the gate checked the input against the upstream's schema", bad.error.code === "VALIDATION" &&
    /'\/a'/.test(bad.error.message) && /number/i.test(bad.error.message), () => show(bad.error));

  step("close");
  const server = client.getServerVersion();
  await client.close();
  return { transport: opts.mode, server, listedTools: listed, plan: out.result, badInput: bad.error.message };
}

// runProgress calls a visible upstream tool directly with a progress
// token and expects the upstream's progress, under the client's token.
async function runProgress(client) {
  const tool = "everything.trigger-long-running-operation";
  step("tools/list with one visible upstream tool");
  const listed = (await client.listTools({}, { timeout: TIMEOUT_MS })).tools.map((t) => t.name).sort();
  check("the visible tool is listed next to the meta-tools", isDeepStrictEqual(listed, [...META, tool].sort()), () => show(listed));

  step("progress of an upstream call reaches the client");
  const seen = [];
  const res = await client.callTool({ name: tool, arguments: { duration: 1, steps: 4 } }, undefined,
    { timeout: TIMEOUT_MS, onprogress: (p) => seen.push(p) });
  check("the call succeeds", res.isError !== true && JSON.stringify(res.content).includes("Steps: 4"), () => show(res));
  check("progress notifications arrive, increasing, with the upstream's total", seen.length >= 3 &&
    seen.every((p, i) => p.total === 4 && (i === 0 || p.progress > seen[i - 1].progress)), () => show(seen));

  step("close");
  const server = client.getServerVersion();
  await client.close();
  return { transport: "progress", server, listedTools: listed, progress: seen };
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

// stateEnv is the SDK's minimal environment plus the test's state
// directory, so that a gateway's pinned tool definitions stay out of the
// user's.
function stateEnv() {
  const env = getDefaultEnvironment();
  if (process.env.XDG_STATE_HOME) env.XDG_STATE_HOME = process.env.XDG_STATE_HOME;
  return env;
}
