// Package presets holds CodeCall's configuration: the four sandbox presets,
// the configuration schema, loading from YAML with environment overrides,
// validation that reports every problem at once, and reload on change.
//
// The full reference, with examples, is docs/config.md in the repository.
//
// # Layers
//
// A configuration is built from, each layer overriding the one before:
//
//  1. the built-in defaults (Default);
//  2. the limits of the chosen preset, which fill vm — the preset is
//     CODECALL_PRESET if set, else the file's preset key, else secure;
//  3. the YAML file (an empty file sets nothing);
//  4. CODECALL_ environment variables.
//
// Every vm key can be overridden on its own: preset: secure with
// vm: {timeout: 10s} gives the secure limits with a 10 s timeout.
//
// # Keys
//
// Keys are case-sensitive camelCase. A key left empty in YAML (timeout:)
// is the same as leaving it out.
//
//	mode                     string   codecall_only | codecall_opt_in | metadata_driven (default codecall_only)
//	preset                   string   locked_down | secure | balanced | experimental (default secure)
//	metaTools.prefix         string   put before search, describe, execute, invoke (default "codecall.");
//	                                  ASCII letters, digits, _ - . only; prefix+"describe" at most 64 characters
//	search.topK              int      results when a request gives none, >= 1 (default 8)
//	search.maxTopK           int      most results a request may ask for, >= topK (default 50)
//	search.lowRelevance      number   0..1; under it a result set carries a warning (default 0.32)
//	search.embeddings        mapping  optional dense retrieval with an embedding model (default off):
//	  provider               string   "" (off) | openai | model2vec
//	  url                    string   openai: base URL of an OpenAI-compatible server (http://localhost:11434)
//	  model                  string   openai: the server's model name (nomic-embed-text)
//	  apiKeyEnv              string   openai: name of the environment variable holding the API key
//	  path                   path     model2vec: model directory, relative to the file
//	  weight                 number   (0, 1]: share of the score given to embedding similarity (default 0.3)
//	describe.maxDefinitions  int      most tools one describe call returns, >= 1 (default 10)
//	include                  [glob]   tools CodeCall may reach; empty means all (default empty)
//	exclude                  [glob]   tools CodeCall never reaches; wins over include (default empty)
//	tools.<name or glob>     mapping  per-tool overrides; config wins over the tool's _meta.codecall:
//	  visibleInListTools     bool     show the tool itself in tools/list
//	  enabledInCodeCall      bool     index (true) or hide (false) the tool in CodeCall
//	  appId                  string   the tool's app, for search filters
//	  tags                   [string] labels for search filters
//	  source                 string   inline | openapi | upstream
//	  examples               list     [{input (mapping, required), output?, description?}]
//	  requiresApproval       bool     ask the user before each call
//	  timeout                duration >= 1ms; bounds one call on every path, replacing the tool's own
//	                                  (an upstream's timeout); the most specific key wins (default: the tool's own)
//	directCalls.enabled      bool     register codecall.invoke (default false)
//	directCalls.allowedTools [glob]   tools invoke may call; empty means all reachable (default empty)
//	audit.path               string   where audit events go: "" none, "-" standard error, else a file
//	                                  appended to (created 0600; its directory must exist) (default "")
//	redaction.keys           [glob]   extra object keys whose values are always redacted, matched
//	                                  case-insensitively against the key in snake_case: "ssn", "*_pin"
//	                                  (default empty; the built-in secret-key rules always apply)
//	redaction.patterns       list     extra value patterns [{name, regex}]; regex is RE2, must not match
//	                                  the empty string; a group named secret limits what is replaced;
//	                                  names are unique and not built-in names (default empty)
//	redaction.disabledPatterns [string] built-in patterns to turn off: privateKey, jwt, bearer,
//	                                  urlCredentials, awsAccessKey, githubToken, slackToken,
//	                                  secretAssignment, cardNumber (default empty)
//	redaction.placeholder    string   what redacted values become, at most 64 bytes, no control
//	                                  characters (default "[REDACTED]")
//	vm.timeout               duration > 0                          (preset)
//	vm.maxToolCalls          int      >= 1                         (preset)
//	vm.maxTimers             int      >= 1; setTimeout calls per run (preset)
//	vm.maxConcurrency        int      >= 1                         (preset)
//	vm.allowLoops            bool                                  (preset)
//	vm.allowConsole          bool                                  (preset)
//	vm.regex                 string   none | literal | full        (preset)
//	vm.regexTimeout          duration >= 0, > 0 when regex is full (preset)
//	vm.maxLogBytes           bytes    > 0                          (preset)
//	vm.maxResultBytes        bytes    > 0                          (preset)
//	vm.memoryBytes           bytes    > 0                          (preset)
//	vm.maxScriptBytes        bytes    > 0                          (preset)
//	vm.maxScriptLines        int      >= 1                         (preset)
//	vm.maxNestingDepth       int      >= 1                         (preset)
//	vm.maxStackDepth         int      >= 1                         (preset)
//	vm.bannedIdentifiers     []string identifiers                  (empty)
//	vm.isolation             string   process | inprocess           (preset)
//	sandbox.poolSize         int      1..256; workers kept warm (default 2)
//	sandbox.maxWorkers       int      poolSize..256; worker processes alive at once (default 8)
//	sandbox.queueTimeout     duration > 0; longest wait for a worker (default 5s)
//	sandbox.command          string   absolute path of the worker executable (default: the server's own binary)
//	transport.maxRequestBytes bytes   1KiB..1GiB; largest HTTP request body or stdin line codecall serve
//	                                  reads; ignored by middleware.Wrap (default 4MiB)
//	console.enabled          bool     serve the operator console under /console with codecall serve --http,
//	                                  and approvals out of band (default false)
//	console.tokenEnv         string   environment variable holding the console's token; required when enabled
//	console.allowRemote      bool     serve the console to non-loopback clients (default false)
//	console.maxRuns          int      1..10000; recent runs kept in memory (default 200)
//	console.maxEvents        int      1..1000000; audit events kept for the console's search (default 10000)
//	state.store              string   memory | file | redis; where paused runs, journals and trust live (default memory)
//	state.path               string   the file store's bbolt file; required when store is file
//	state.url                string   the redis store's redis:// or rediss:// URL; required when store is redis
//	state.keyEnv             string   environment variable holding the journal key (32 bytes, base64 or hex);
//	                                  required when store is file or redis
//	policy.paths             [path]   .rego modules, .json/.yaml data, directories; relative to the file (default empty: built-in policy)
//	policy.query             string   the decision rule (default data.codecall.decision)
//	policy.filterDiscovery   bool     hide tools the policy always denies from search and describe (default false)
//	approval.timeout         duration > 0; time a person has to answer (default 2m)
//	approval.allowSessionTrust bool   offer "approve for this session" (default true)
//	upstreams.file           path     {"mcpServers": ...} JSON file, relative to the config file (codecall serve)
//	upstreams.separator      string   between server id and tool name (default ".")
//	upstreams.start          string   eager | lazy (default eager)
//	upstreams.startTimeout   duration >= 0 (default 1m)
//	upstreams.servers.<id>   mapping  one upstream MCP server; id: letters, digits, _ -
//	  type                   string   stdio | http | sse | openapi (inferred: command -> stdio, url -> http, openapi -> openapi)
//	  command, args          string, [string]  the stdio server
//	  env                    mapping  set for the child; values may hold ${VAR}
//	  envAllowlist           [string] CodeCall variables passed on; nothing else but PATH, HOME, ... is
//	  cwd                    path     the child's working directory
//	  url, headers           string, mapping   HTTP/SSE endpoint; header values may hold ${VAR}
//	  enabled                bool     default true
//	  timeout                duration ceiling of one call (default 1m)
//	  includeTools           [glob]   over the upstream's tool names; empty means all
//	  excludeTools           [glob]   wins over includeTools
//	  requiresApproval       bool     default for every tool of the server
//	  prefix                 bool     false: tool and prompt names unchanged (default true: <id><separator><name>)
//	  openapi                path|URL an OpenAPI app: the document whose operations become tools (no command or url)
//	  baseUrl                URL      where the app's requests go (default: the document's first server)
//	  auth.bearer            string   Authorization: Bearer <value>; may hold ${VAR}
//	  auth.query             mapping  query parameters added to every request; values may hold ${VAR}
//	  operations.<id>        mapping  per operationId: requiresApproval (bool), timeout (duration)
//	  allowPrivateNetwork    bool     let the app reach loopback/private/link-local addresses (default false)
//	  maxResponseBytes       bytes    largest response body read (default 4MiB)
//
// The preset values:
//
//	                 locked_down       secure         balanced        experimental
//	timeout          2s                3.5s           5s              10s
//	maxToolCalls     20                100            500             2000
//	maxTimers        20                100            500             2000
//	maxConcurrency   2                 4              8               16
//	allowLoops       false             false          true            true
//	allowConsole     false             true           true            true
//	regex            none              literal        full            full
//	regexTimeout     0                 0              100ms           250ms
//	maxLogBytes      16KiB             64KiB          256KiB          1MiB
//	maxResultBytes   64KiB             256KiB         1MiB            4MiB
//	memoryBytes      64MiB             128MiB         256MiB          512MiB
//	maxScriptBytes   16KiB             64KiB          128KiB          256KiB
//	maxScriptLines   500               2000           4000            8000
//	maxNestingDepth  32                48             64              96
//	maxStackDepth    128               256            512             1024
//	isolation        process           process        inprocess       inprocess
//
// vm.isolation process runs each plan in a sandboxed worker process (Linux:
// namespaces, an empty root, seccomp, rlimits); the sandbox keys size its
// pool. Where the platform cannot start workers, locked_down refuses to
// start and the other presets fall back to inprocess with a warning.
//
// # Values
//
// A duration is a Go duration string: "3.5s", "250ms", "1m30s"; a bare
// number is refused (5 would mean 5 ns), except 0. A byte size is a whole
// number of bytes or a number and a unit (see ParseByteSize): B, KB, MB, GB
// (powers of 1000), KiB, MiB, GiB (powers of 1024), case-insensitive,
// e.g. 65536, "64KiB", "1.5 MiB", "512KB". A glob is a gobwas/glob pattern
// compiled without separators, so * matches across dots: "billing.*"
// matches "billing.invoices.list" (see Glob). A list of globs may be given
// as a single string.
//
// # Environment
//
// A variable CODECALL_<KEY> overrides a key: nesting levels are separated by
// a double underscore, and each level is matched case-insensitively against
// the real key, ignoring single underscores. Values are parsed like YAML
// scalars of the key's type; lists are comma-separated (commas inside {...}
// belong to the glob). Examples:
//
//	CODECALL_MODE=codecall_opt_in
//	CODECALL_PRESET=balanced
//	CODECALL_VM__TIMEOUT=5s
//	CODECALL_VM__MAX_TOOL_CALLS=50
//	CODECALL_SEARCH__TOPK=12
//	CODECALL_DIRECTCALLS__ENABLED=true
//	CODECALL_EXCLUDE=admin.*,{users,orgs}.delete
//
// tools entries cannot be set from the environment: their keys are tool
// names and globs, which variable names cannot spell; nor can
// redaction.patterns, a list of mappings. A CODECALL_ variable
// that names no key is an error naming the variable, except
// EnvGatewayDepth (CODECALL_GATEWAY_DEPTH), which a gateway sets for the
// upstreams it starts and loading skips.
//
// # Errors
//
// Load, LoadEnv, Parse and Config.Validate return a *ValidationError listing
// every problem, each with its source (file or variable), line, full key
// path and, for unknown keys or values, what is allowed.
//
// # Reload
//
// Watch and NewWatcher reload the file when it changes (debounced by
// DefaultDebounce), validate it, and pass a valid, changed configuration to
// a callback; a broken edit is logged at warn level and the last good
// configuration stays in force.
package presets
