// End-to-end checks of a CodeCall server through the official MCP
// TypeScript SDK client.
//
//   node client.mjs --expect EXPECT.json --catalog CATALOG.json stdio COMMAND [ARG...]
//   node client.mjs --expect EXPECT.json --catalog CATALOG.json http URL
//
// Progress goes to stderr, one line per check. The last line on stdout is a
// JSON summary: {"ok": true, ...} or {"ok": false, "error": ...}. The exit
// code is 0 when every check passed, 1 when one failed and 2 on bad usage.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual, inspect } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const REQUEST_TIMEOUT_MS = 30_000;

class CheckFailed extends Error {
  constructor(check, detail) {
    super(`check failed: ${check}: ${detail}`);
    this.name = "CheckFailed";
    this.check = check;
  }
}

class UsageError extends Error {}

let checks = 0;
// warnings are findings that do not fail the run: behaviour the server gets
// from a dependency, reported so that it stays visible.
const warnings = [];
let currentStep = "start";

function show(v) {
  return inspect(v, { depth: 6, breakLength: Infinity, maxStringLength: 400 });
}

function log(line) {
  process.stderr.write(`client: ${line}\n`);
}

// check records one assertion; detail is only built when it fails.
function check(name, cond, detail) {
  checks++;
  if (!cond) {
    throw new CheckFailed(`${currentStep}: ${name}`, typeof detail === "function" ? detail() : (detail ?? "condition is false"));
  }
}

// advise records a soft check: a failure is a warning, not an error.
function advise(name, cond, detail) {
  if (!cond) {
    const w = `${currentStep}: ${name}: ${typeof detail === "function" ? detail() : (detail ?? "condition is false")}`;
    warnings.push(w);
    log(`WARN ${w}`);
  }
}

function step(name) {
  currentStep = name;
  log(`== ${name}`);
}

function passed(what) {
  log(`ok   ${currentStep}: ${what}`);
}

function parseArgs(argv) {
  const opts = { expect: "", catalog: "", mode: "", target: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--expect" || a === "--catalog") {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a file`);
      opts[a.slice(2)] = argv[++i];
    } else if (a.startsWith("--")) {
      throw new UsageError(`unknown flag ${a}`);
    } else {
      break;
    }
  }
  opts.mode = argv[i] ?? "";
  opts.target = argv.slice(i + 1);
  if (!opts.expect) throw new UsageError("--expect is required");
  if (!opts.catalog) throw new UsageError("--catalog is required");
  if (opts.mode === "stdio") {
    if (opts.target.length < 1) throw new UsageError("stdio needs a command");
  } else if (opts.mode === "http") {
    if (opts.target.length !== 1) throw new UsageError("http needs exactly one URL");
    const u = new URL(opts.target[0]);
    if (!["127.0.0.1", "[::1]", "localhost"].includes(u.hostname)) {
      throw new UsageError(`refusing non-loopback URL ${u.href}`);
    }
  } else {
    throw new UsageError(`transport must be stdio or http, not ${JSON.stringify(opts.mode)}`);
  }
  return opts;
}

function readJSON(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${err.message}`);
  }
}

// fullName is the name a catalog entry is served under.
function fullName(entry) {
  return entry.app ? `${entry.app}.${entry.name}` : entry.name;
}

// payload checks the meta-tool result convention (structuredContent plus the
// same JSON as one text block) and returns the structured content.
function payload(what, res) {
  check(`${what} returns structuredContent`, res && typeof res.structuredContent === "object" && res.structuredContent !== null,
    () => `result: ${show(res)}`);
  const texts = (res.content ?? []).filter((c) => c.type === "text");
  check(`${what} carries one text block`, texts.length === 1, () => `content: ${show(res.content)}`);
  let parsed;
  try {
    parsed = JSON.parse(texts[0].text);
  } catch (err) {
    check(`${what} text block is JSON`, false, () => `${err.message}: ${texts[0].text}`);
  }
  check(`${what} text block equals structuredContent`, isDeepStrictEqual(parsed, res.structuredContent),
    () => `text: ${texts[0].text}\nstructured: ${JSON.stringify(res.structuredContent)}`);
  return res.structuredContent;
}

async function listAllTools(client) {
  const tools = [];
  let cursor;
  for (let page = 0; page < 50; page++) {
    const res = await client.listTools(cursor ? { cursor } : {}, { timeout: REQUEST_TIMEOUT_MS });
    tools.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) return tools;
  }
  throw new CheckFailed(`${currentStep}: tools/list pagination ends`, "more than 50 pages");
}

async function callTool(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
}

// search calls codecall.search; total is the expected totalAvailableTools:
// the number of enabled tools that pass the request's filter.
async function search(client, ex, args, what, total = ex.enabledTools) {
  const res = await callTool(client, ex.metaTools.search, args);
  check(`${what}: search succeeds`, res.isError !== true, () => `result: ${show(res)}`);
  const out = payload(what, res);
  check(`${what}: tools is an array`, Array.isArray(out.tools), () => show(out));
  for (const hit of out.tools) {
    check(`${what}: hit has name, description, appId, source`,
      typeof hit.name === "string" && hit.name !== "" && typeof hit.description === "string" &&
        typeof hit.appId === "string" && hit.appId !== "" && typeof hit.source === "string",
      () => show(hit));
    check(`${what}: score is a number in [0, 1]`, typeof hit.score === "number" && hit.score >= 0 && hit.score <= 1, () => show(hit));
  }
  for (let i = 1; i < out.tools.length; i++) {
    check(`${what}: hits are sorted by score`, out.tools[i - 1].score >= out.tools[i].score, () => show(out.tools));
  }
  check(`${what}: totalAvailableTools is ${total}`, out.totalAvailableTools === total,
    () => `got ${show(out.totalAvailableTools)}`);
  return out;
}

function rankOf(out, name) {
  return out.tools.findIndex((h) => h.name === name);
}

function expectTopHit(out, name, within, what) {
  const rank = rankOf(out, name);
  check(`${what}: ${name} is in the top ${within}`, rank >= 0 && rank < within,
    () => `rank ${rank < 0 ? "none" : rank + 1}; hits: ${show(out.tools.map((h) => `${h.name} (${h.score})`))}`);
  return rank;
}

// expectToolError checks a codecall.invoke failure and returns its error body.
function expectToolError(res, tool, code, what) {
  check(`${what}: isError is true`, res.isError === true, () => `result: ${show(res)}`);
  const out = payload(what, res);
  check(`${what}: status is tool_error`, out.status === "tool_error", () => show(out));
  check(`${what}: error is an object`, out.error && typeof out.error === "object", () => show(out));
  check(`${what}: error.code is ${code}`, out.error.code === code, () => show(out.error));
  check(`${what}: error.toolName is ${tool}`, out.error.toolName === tool, () => show(out.error));
  check(`${what}: error.message is not empty`, typeof out.error.message === "string" && out.error.message.trim() !== "",
    () => show(out.error));
  return out.error;
}

async function run(opts) {
  const ex = readJSON(opts.expect);
  const catalog = readJSON(opts.catalog);
  const catalogByName = new Map(catalog.map((e) => [fullName(e), e]));
  const meta = ex.metaTools;
  // enabledIn counts the catalog tools CodeCall should reach in some apps.
  const enabledIn = (appIds) => catalog.filter((e) => appIds.includes(e.app) && fullName(e) !== ex.excluded.tool).length;
  check("expect.json's enabledTools matches the catalog", enabledIn(ex.apps) === ex.enabledTools,
    () => `catalog minus ${ex.excluded.tool} has ${enabledIn(ex.apps)} tools in ${ex.apps}, expect.json says ${ex.enabledTools}`);
  const summary = { transport: opts.mode };

  let transport;
  if (opts.mode === "stdio") {
    // The server's stderr (its logs) goes to ours, so a failing run shows them.
    // The SDK's minimal environment, plus the test's state directory, so
    // that a gateway's pinned tool definitions stay out of the user's.
    const env = getDefaultEnvironment();
    if (process.env.XDG_STATE_HOME) env.XDG_STATE_HOME = process.env.XDG_STATE_HOME;
    transport = new StdioClientTransport({ command: opts.target[0], args: opts.target.slice(1), stderr: "inherit", env });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(opts.target[0]));
  }
  let negotiated;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    negotiated = v;
    setProtocolVersion?.(v);
  };

  const client = new Client({ name: "codecall-e2e", version: "0.0.0" }, { capabilities: {} });
  client.onerror = (err) => log(`transport error: ${err?.message ?? err}`);

  step("initialize");
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  const server = client.getServerVersion();
  check("server reports a name and version", server && typeof server.name === "string" && server.name !== "" &&
    typeof server.version === "string" && server.version !== "", () => show(server));
  const caps = client.getServerCapabilities();
  check("server has the tools capability", caps && typeof caps.tools === "object" && caps.tools !== null, () => show(caps));
  check("tools.listChanged is true", caps.tools.listChanged === true, () => show(caps.tools));
  summary.server = server;
  summary.protocolVersion = negotiated ?? null;
  passed(`${server.name} ${server.version}, protocol ${negotiated ?? "?"}, capabilities ${JSON.stringify(caps)}`);

  step("tools/list");
  const listed = await listAllTools(client);
  const names = listed.map((t) => t.name);
  summary.listedTools = names;
  for (const want of Object.values(meta)) {
    check(`${want} is listed`, names.includes(want), () => `listed: ${show(names)}`);
  }
  for (const t of listed) {
    check(`${t.name} is a meta-tool`, ex.allMetaTools.includes(t.name), () => `listed: ${show(names)}`);
    check(`${t.name} is no catalog tool`, !catalogByName.has(t.name), () => `listed: ${show(names)}`);
    check(`${t.name} has an object inputSchema`, t.inputSchema?.type === "object", () => show(t.inputSchema));
    check(`${t.name} has a description`, typeof t.description === "string" && t.description.trim() !== "", () => show(t));
  }
  check("no duplicate names", new Set(names).size === names.length, () => show(names));
  const searchTool = listed.find((t) => t.name === meta.search);
  for (const app of ex.apps) {
    check(`${meta.search} description names app ${app}`, searchTool.description.includes(app), () => searchTool.description);
  }
  const invokeTool = listed.find((t) => t.name === meta.invoke);
  check(`${meta.invoke} requires tool`, (invokeTool.inputSchema.required ?? []).includes("tool"), () => show(invokeTool.inputSchema));
  passed(`only meta-tools: ${names.join(", ")}`);

  step("search by task");
  const found = [];
  for (const s of ex.searches) {
    const out = await search(client, ex, { query: s.query }, `search ${JSON.stringify(s.query)}`);
    const rank = expectTopHit(out, s.expect, s.within, `search ${JSON.stringify(s.query)}`);
    check(`${s.query}: no excluded tool in hits`, rankOf(out, ex.excluded.tool) < 0, () => show(out.tools));
    found.push(s.expect);
    passed(`${JSON.stringify(s.query)} -> ${s.expect} at rank ${rank + 1} of ${out.tools.length}`);
  }

  step("search with filter.appIds");
  {
    const f = ex.filteredSearch;
    const what = `search ${JSON.stringify(f.query)} in ${f.appIds}`;
    const out = await search(client, ex, { query: f.query, filter: { appIds: f.appIds } }, what, enabledIn(f.appIds));
    check(`${what}: has hits`, out.tools.length > 0, () => show(out));
    for (const hit of out.tools) {
      check(`${what}: every hit is in ${f.appIds}`, f.appIds.includes(hit.appId), () => show(hit));
    }
    const rank = expectTopHit(out, f.expect, f.within, what);
    passed(`${out.tools.length} hits, all in ${f.appIds}; ${f.expect} at rank ${rank + 1}`);

    const e = ex.excludedSearch;
    const ew = `search ${JSON.stringify(e.query)} in ${e.appIds}`;
    const eout = await search(client, ex, { query: e.query, filter: { appIds: e.appIds } }, ew, enabledIn(e.appIds));
    check(`${ew}: excluded ${ex.excluded.tool} is not found`, rankOf(eout, ex.excluded.tool) < 0, () => show(eout.tools));
    passed(`excluded ${ex.excluded.tool} is not searchable`);

    const uw = `search with unknown appId ${ex.unknownAppId}`;
    const uout = await search(client, ex, { query: f.query, filter: { appIds: [ex.unknownAppId] } }, uw, 0);
    check(`${uw}: no hits`, uout.tools.length === 0, () => show(uout.tools));
    check(`${uw}: a warning explains why`, Array.isArray(uout.warnings) && uout.warnings.length > 0 &&
      uout.warnings.every((w) => typeof w.type === "string" && typeof w.message === "string" && w.message !== ""),
    () => show(uout));
    passed(`unknown appId gives no hits and warnings ${show(uout.warnings.map((w) => w.type))}`);
  }

  step("search with an empty query");
  for (const q of ["", "   "]) {
    const what = `search ${JSON.stringify(q)}`;
    const res = await callTool(client, meta.search, { query: q });
    check(`${what}: isError is true`, res.isError === true, () => `result: ${show(res)}`);
    const out = payload(what, res);
    check(`${what}: error.code is VALIDATION`, out.error?.code === "VALIDATION", () => show(out));
    check(`${what}: message says the query is the problem`,
      typeof out.error.message === "string" && /query/i.test(out.error.message), () => show(out.error));
    passed(`${what} -> ${out.error.message}`);
  }
  await client.ping({ timeout: REQUEST_TIMEOUT_MS });
  {
    const s = ex.searches[0];
    const out = await search(client, ex, { query: s.query }, "search after the error");
    expectTopHit(out, s.expect, s.within, "search after the error");
    passed("the server still answers ping and search");
  }

  step("describe");
  {
    const want = [...found.slice(0, 2)];
    check("two tools were found to describe", want.length === 2, () => show(found));
    const unknown = ex.describe.unknown;
    // The default format gives TypeScript declarations only; "both" adds
    // the JSON Schemas.
    const lean = payload("describe (default format)", await callTool(client, meta.describe, { tools: want }));
    check("the default format is TypeScript without JSON Schemas",
      lean.tools.every((d) => typeof d.typescript === "string" && d.inputSchema === undefined), () => show(lean.tools));
    const res = await callTool(client, meta.describe, { tools: [...want, unknown, ex.excluded.tool], format: "both" });
    check("describe succeeds", res.isError !== true, () => `result: ${show(res)}`);
    const out = payload("describe", res);
    check("tools is an array", Array.isArray(out.tools), () => show(out));
    check(`describes exactly ${want}`, isDeepStrictEqual(out.tools.map((t) => t.name).sort(), [...want].sort()),
      () => show(out.tools.map((t) => t.name)));
    for (const d of out.tools) {
      const entry = catalogByName.get(d.name);
      const schema = entry.inputSchema ?? entry.input_schema;
      check(`${d.name}: inputSchema is the catalog's`, isDeepStrictEqual(d.inputSchema, schema),
        () => `got ${JSON.stringify(d.inputSchema)}\nwant ${JSON.stringify(schema)}`);
      check(`${d.name}: description is the catalog's`, d.description === entry.description, () => show(d.description));
      check(`${d.name}: appId is ${entry.app}`, d.appId === entry.app, () => show(d.appId));
      check(`${d.name}: typescript is a non-empty string`, typeof d.typescript === "string" && d.typescript.trim() !== "",
        () => show(d.typescript));
      check(`${d.name}: typescript mentions callTool`, d.typescript.includes("callTool"), () => d.typescript);
      check(`${d.name}: typescript mentions the tool name`, d.typescript.includes(d.name), () => d.typescript);
      for (const req of schema.required ?? []) {
        check(`${d.name}: typescript declares ${req}`, d.typescript.includes(req), () => d.typescript);
      }
    }
    check(`notFound lists ${unknown}`, Array.isArray(out.notFound) && out.notFound.includes(unknown), () => show(out));
    check(`notFound lists excluded ${ex.excluded.tool}`, out.notFound.includes(ex.excluded.tool), () => show(out.notFound));
    check("notFound lists nothing else", out.notFound.length === 2, () => show(out.notFound));
    passed(`described ${want.join(", ")}; notFound ${out.notFound.join(", ")}`);
  }

  step("invoke with valid input");
  {
    const inv = ex.invoke;
    const res = await callTool(client, meta.invoke, { tool: inv.tool, input: inv.input });
    check("invoke succeeds", res.isError !== true, () => `result: ${show(res)}`);
    const out = payload("invoke", res);
    check("structuredContent echoes the tool and input", isDeepStrictEqual(out, { tool: inv.tool, input: inv.input }),
      () => `got ${JSON.stringify(out)}`);
    passed(`${inv.tool} echoed ${JSON.stringify(out.input)}`);
  }

  step("invoke with invalid input");
  {
    const inv = ex.invalidInvoke;
    const res = await callTool(client, meta.invoke, { tool: inv.tool, input: inv.input });
    const err = expectToolError(res, inv.tool, "VALIDATION", "invoke without required field");
    check(`message names the missing field ${inv.missing}`, err.message.includes(inv.missing), () => show(err));
    check("message is plain text, not a Go value dump", !/&\{|%!/.test(err.message), () => err.message);
    check("the error says how to fix it, and that retrying unchanged will not help",
      typeof err.hint === "string" && err.hint !== "" && err.retryable === false, () => show(err));
    check("the error repeats the input and names the run", isDeepStrictEqual(err.toolInput, inv.input) &&
      typeof res.structuredContent.runId === "string" && res.structuredContent.runId !== "", () => show(res.structuredContent));
    passed(`VALIDATION: ${err.message}`);
  }

  step("invoke an excluded or unknown tool");
  for (const inv of [ex.excluded, ex.unknownInvoke]) {
    const res = await callTool(client, meta.invoke, { tool: inv.tool, input: inv.input });
    const err = expectToolError(res, inv.tool, "NOT_FOUND", `invoke ${inv.tool}`);
    passed(`${inv.tool}: NOT_FOUND: ${err.message}`);
  }

  step("tools/call on hidden catalog tools");
  for (const d of [ex.direct, ex.excluded]) {
    let res;
    let thrown;
    try {
      res = await callTool(client, d.tool, d.input);
    } catch (err) {
      thrown = err;
    }
    if (thrown) {
      check(`${d.tool}: refused with a protocol error`, typeof thrown.code === "number",
        () => `unexpected exception: ${thrown.stack ?? thrown}`);
      passed(`${d.tool}: ${thrown.message}`);
    } else {
      check(`${d.tool}: refused`, res.isError === true, () => `the hidden tool answered: ${show(res)}`);
      check(`${d.tool}: no echo of the input`, !isDeepStrictEqual(res.structuredContent, { tool: d.tool, input: d.input }),
        () => show(res));
      passed(`${d.tool}: isError ${show(res.content)}`);
    }
  }

  step("execute a plan");
  {
    const inv = ex.invoke;
    const script = `
      const [event, hidden] = await Promise.all([
        callTool(${JSON.stringify(inv.tool)}, codecallContext.input),
        callTool(${JSON.stringify(ex.excluded.tool)}, ${JSON.stringify(ex.excluded.input)}, {throwOnError: false}),
      ]);
      return {title: event.input.title, attendees: event.input.attendees.length, hidden: hidden.ok ? "reached" : hidden.error.code};`;
    const res = await callTool(client, meta.execute, { script, context: { input: inv.input } });
    const out = payload("execute", res);
    check("execute succeeds", res.isError !== true && out.status === "ok", () => `result: ${show(out)}`);
    check("the plan joins the tool's result and refuses the excluded tool",
      isDeepStrictEqual(out.result, { title: inv.input.title, attendees: inv.input.attendees.length, hidden: "NOT_FOUND" }),
      () => `got ${JSON.stringify(out.result)}`);
    check("toolTrace lists both calls without inputs", Array.isArray(out.toolTrace) && out.toolTrace.length === 2 &&
      out.toolTrace.every((t) => !("input" in t) && !("toolInput" in t)), () => show(out.toolTrace));

    const bad = payload("execute with a bad input", await callTool(client, meta.execute,
      { script: `return await callTool(${JSON.stringify(ex.invalidInvoke.tool)}, ${JSON.stringify(ex.invalidInvoke.input)})` }));
    check("a plan's invalid tool input is a tool_error", bad.status === "tool_error" && bad.error.code === "VALIDATION" &&
      bad.error.toolName === ex.invalidInvoke.tool && bad.error.message.includes(ex.invalidInvoke.missing), () => show(bad));
    passed(`plan result ${JSON.stringify(out.result)}; bad input -> ${bad.error.message}`);
  }

  step("meta-tool argument errors");
  for (const [tool, args, field] of [
    [meta.search, { query: "x", limit: 3 }, "limit"],
    [meta.describe, { tools: "one" }, "tools"],
    [meta.execute, {}, "script"],
    [meta.invoke, { name: "x" }, "name"],
  ]) {
    const res = await callTool(client, tool, args);
    check(`${tool} ${JSON.stringify(args)}: isError`, res.isError === true, () => show(res));
    const out = payload(`${tool} with a wrong argument`, res);
    check(`${tool}: error {code: VALIDATION, field: ${field}, hint}`, out.error?.code === "VALIDATION" && out.error.field === field &&
      typeof out.error.hint === "string" && out.error.hint.startsWith("Arguments: "), () => show(out));
    check(`${tool}: no Go value formatting`, !JSON.stringify(res).includes("&{"), () => show(res));
    passed(`${tool}: ${out.error.message}`);
  }

  step("a TypeScript plan that finds, reads and calls");
  {
    const inv = ex.invoke;
    const notes = [];
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === "notifications/codecall/tool_call") notes.push(n.params);
    };
    const script = `
      interface Hit { name: string; requiresApproval?: boolean }
      const hits: Hit[] = await searchTools("schedule a meeting with attendees", {appIds: ["calendar"], topK: 3});
      const names = hits.map((h: Hit) => h.name);
      const {tools} = await describeTools([${JSON.stringify(inv.tool)}]) as {tools: {name: string; inputSchema: {required?: string[]}}[]};
      const event = await callTool<{input: {title: string}}>(tools[0].name, codecallContext.input);
      const hidden = await searchTools("permanently delete a note");
      return {found: names.includes(${JSON.stringify(inv.tool)}), required: tools[0].inputSchema.required ?? [],
        title: event.input.title, excludedFound: hidden.some((h: Hit) => h.name === ${JSON.stringify(ex.excluded.tool)})};`;
    const res = await callTool(client, meta.execute, { script, context: { input: inv.input } });
    const out = payload("TypeScript plan", res);
    check("the TypeScript plan succeeds", res.isError !== true && out.status === "ok", () => show(out));
    check("it found and called the tool, and never saw the excluded one", out.result.found === true &&
      out.result.title === inv.input.title && out.result.excludedFound === false, () => show(out.result));
    check("the result carries its envelope", /^sha256:[0-9a-f]{64}$/.test(out.inputDigest) &&
      /^sha256:[0-9a-f]{64}$/.test(out.outputDigest) && out.approvalState === "NOT_REQUIRED", () => show(out));
    const bad = payload("TypeScript plan with an error on line 3", await callTool(client, meta.execute,
      { script: "const a: number = 1;\nconst b: string = 'x';\nconst c: = 3;\nreturn a;" }));
    check("a syntax error in TypeScript points at its line", bad.status === "syntax_error" && bad.error.location?.line === 3, () => show(bad));
    for (let i = 0; i < 50 && notes.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const phases = notes.map((n) => `${n.toolName} ${n.phase}`);
    check("the plan's call was announced at its start and end", phases.includes(`${inv.tool} start`) && phases.includes(`${inv.tool} end`) &&
      notes.every((n) => typeof n.callId === "string" && n.runId === out.runId), () => show(notes));
    passed(`result ${JSON.stringify(out.result)}; notifications ${phases.join(", ")}`);
  }

  step("tools/list again");
  {
    const again = (await listAllTools(client)).map((t) => t.name);
    check("tools/list is unchanged", isDeepStrictEqual(again, names), () => `before ${show(names)}, after ${show(again)}`);
    passed("unchanged");
  }

  step("close");
  await client.close();
  passed("closed");
  return summary;
}

async function main() {
  const started = Date.now();
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`client: ${err.message}\n`);
    process.stdout.write(JSON.stringify({ ok: false, error: `usage: ${err.message}` }) + "\n");
    process.exit(2);
  }
  try {
    const summary = await run(opts);
    process.stdout.write(JSON.stringify({ ok: true, ...summary, checks, warnings, durationMs: Date.now() - started }) + "\n");
    process.exit(0);
  } catch (err) {
    const message = err instanceof CheckFailed ? err.message : `${currentStep}: ${err?.stack ?? err}`;
    process.stderr.write(`client: FAIL ${message}\n`);
    process.stdout.write(JSON.stringify({
      ok: false, transport: opts.mode, step: currentStep, error: err?.message ?? String(err), checks, warnings,
      durationMs: Date.now() - started,
    }) + "\n");
    process.exit(1);
  }
}

await main();
