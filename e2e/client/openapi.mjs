// End-to-end checks of an OpenAPI app: `codecall serve --config FILE`
// whose upstreams.servers.shop is examples/openapi/bookshop.yaml served by
// Stoplight Prism (a mock that validates every request against the
// document), driven by the official MCP TypeScript SDK client.
//
//   node openapi.mjs http URL
//
// CODECALLTEST_SHOP_TOKEN is the credential the server sends to the API;
// no result may show it. Progress goes to stderr; the last stdout line is
// a JSON summary ({"ok": true, ...}).

import { inspect } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 60_000;
const TOKEN = process.env.CODECALLTEST_SHOP_TOKEN ?? "";
let checks = 0;
let currentStep = "start";
const seen = []; // every result, to look for the credential

const show = (v) => inspect(v, { depth: 6, breakLength: Infinity, maxStringLength: 600 });
const log = (line) => process.stderr.write(`openapi client: ${line}\n`);
function step(name) { currentStep = name; log(`== ${name}`); }
function check(name, cond, detail) {
  checks++;
  if (!cond) throw new Error(`check failed: ${currentStep}: ${name}: ${typeof detail === "function" ? detail() : detail ?? "false"}`);
}

async function run(mode, url) {
  check("the credential is given to the test", TOKEN.length >= 8, "set CODECALLTEST_SHOP_TOKEN");
  const client = new Client({ name: "codecall-openapi-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const prompts = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    prompts.push(req.params.message);
    return { action: "accept", content: { decision: "approve" } };
  });
  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });
    seen.push(res);
    check(`${name} answers with structuredContent`, res?.structuredContent && typeof res.structuredContent === "object", () => show(res));
    return res.structuredContent;
  };
  const execute = (script) => call("codecall.execute", { script });

  step("connect");
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: TIMEOUT_MS });

  step("search finds the operations");
  for (const [query, want] of [
    ["order books and ship them to an address", "shop.createOrder"],
    ["list the books of a genre", "shop.listBooks"],
    ["category with its subcategories", "shop.getCategory"],
  ]) {
    const out = await call("codecall.search", { query, topK: 5 });
    const hit = out.tools.find((t) => t.name === want);
    check(`"${query}" finds ${want} in the top 3`, out.tools.slice(0, 3).some((t) => t.name === want), () => show(out.tools));
    check(`${want} is an openapi tool of the app shop`, hit.source === "openapi" && hit.appId === "shop", () => show(hit));
  }
  const without = await call("codecall.search", { query: "order books", filter: { includeOpenApi: false } });
  check("includeOpenApi: false leaves the app out", without.tools.every((t) => t.source !== "openapi"), () => show(without.tools));

  step("describe shows the merged schema and TypeScript");
  const described = await call("codecall.describe", { tools: ["shop.createOrder", "shop.getCategory"], format: "both" });
  const byName = Object.fromEntries(described.tools.map((t) => [t.name, t]));
  const order = byName["shop.createOrder"];
  check("createOrder merges the header and the body", order?.inputSchema?.properties?.["Idempotency-Key"] &&
    order.inputSchema.properties.shipTo?.properties?.country, () => show(order));
  check("createOrder requires the header and the body's fields", ["Idempotency-Key", "bookId", "quantity", "shipTo"]
    .every((k) => order.inputSchema.required.includes(k)), () => show(order.inputSchema.required));
  check("createOrder's TypeScript names the tool and the header", order.typescript.includes("shop.createOrder") &&
    order.typescript.includes("Idempotency-Key"), () => order.typescript);
  const category = byName["shop.getCategory"];
  check("getCategory's recursive output keeps its name", category?.outputSchema?.$defs?.Category &&
    category.typescript.includes("Category"), () => show(category));

  step("a plan calls several operations at once");
  const reads = await execute(`
    const [page, book, tree] = await Promise.all([
      callTool("shop.listBooks", {genre: "scifi", limit: 5, tags: ["classic", "space opera"]}),
      callTool("shop.getBook", {bookId: "b-1"}),
      callTool("shop.getCategory", {categoryId: 3}),
    ]);
    return {items: page.items.length, total: typeof page.total, title: typeof book.title, category: typeof tree.name};`);
  check("the plan succeeds", reads.status === "ok", () => show(reads));
  check("the results are the API's", reads.result.total === "number" && reads.result.title === "string" &&
    reads.result.category === "string", () => show(reads.result));
  check("reads are not asked about", prompts.length === 0, () => show(prompts));

  step("a write asks for approval");
  const write = await execute(`
    return await callTool("shop.createOrder", {"Idempotency-Key": "order-0001", bookId: "b-1", quantity: 2,
      shipTo: {street: "1 Main St", city: "Oslo", country: "NO"}});`);
  check("the order is placed", write.status === "ok" && ["placed", "shipped", "delivered"].includes(write.result.status), () => show(write));
  check("a person was asked first", prompts.length === 1 && prompts[0].includes("shop.createOrder"), () => show(prompts));

  step("bad input is refused before any HTTP request");
  const bad = await execute(`
    return await callTool("shop.createOrder", {"Idempotency-Key": "order-0002", bookId: "b-1", quantity: 0,
      shipTo: {street: "1 Main St", city: "Oslo", country: "Norway"}});`);
  check("the gate refuses it", bad.status === "tool_error" && bad.error.code === "VALIDATION" &&
    bad.error.toolName === "shop.createOrder", () => show(bad));
  check("nobody was asked about it", prompts.length === 1, () => show(prompts));

  step("an HTTP 401 is a clean tool error");
  const denied = await execute(`return await callTool("shop.get_admin_stats", {});`);
  check("the call fails as the tool's error", denied.status === "tool_error" && denied.error.toolName === "shop.get_admin_stats", () => show(denied));
  check("the message gives the status and the API's words", /HTTP 401/.test(denied.error.message) &&
    /message/.test(denied.error.message), () => show(denied.error));
  check("the hint says what to do", /credentials/.test(denied.error.hint ?? ""), () => show(denied.error));

  step("the credential never reaches the client");
  const all = JSON.stringify(seen);
  check("no result holds the credential", !all.includes(TOKEN), "a result holds CODECALLTEST_SHOP_TOKEN");

  step("close");
  const server = client.getServerVersion();
  await client.close();
  return { transport: mode, server, listedTools: [], orders: write.result.status };
}

const [mode, url] = process.argv.slice(2);
try {
  if (mode !== "http" || !url) throw new Error("usage: openapi.mjs http URL");
  const summary = await run(mode, url);
  process.stdout.write(JSON.stringify({ ok: true, ...summary, checks }) + "\n");
  process.exit(0);
} catch (err) {
  log(`FAIL ${err?.stack ?? err}`);
  process.stdout.write(JSON.stringify({ ok: false, transport: mode, step: currentStep, error: err?.message ?? String(err), checks }) + "\n");
  process.exit(1);
}
