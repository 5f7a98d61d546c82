package search

// relatedGroups is the built-in vocabulary of words that agents use for the
// same need. Every member of a group expands to every other member of that
// group (one hop, never transitively), at a lower weight than the word the
// query actually used. Members may be phrases; a phrase in a query ("pull
// request", "who am i") is recognised as one concept before stop words are
// dropped.
//
// The groups are deliberately about intent rather than strict synonymy:
// tools name the operation ("create_issue") while agents describe the task
// ("open a ticket"). A word that belongs to several groups ("open": create,
// read and state) expands into all of them; the nouns of the query then
// decide. The slice is read-only.
var relatedGroups = [][]string{
	// Verbs: the operation a tool performs.
	{"create", "add", "new", "make", "insert", "open", "register", "compose", "draft", "prepare", "file a", "file an", "raise", "submit", "post"},
	{"delete", "remove", "drop", "destroy", "erase", "purge", "discard", "trash", "wipe", "unlink", "rm", "del", "get rid of"},
	{"list", "find", "search", "query", "lookup", "look up", "browse", "enumerate", "get all", "show all", "all"},
	{"search", "find", "lookup", "look up", "locate", "discover", "filter", "grep", "match"},
	{"update", "edit", "modify", "change", "patch", "set", "alter", "adjust", "amend", "rename", "rewrite", "overwrite", "replace", "upsert", "write"},
	{"read", "get", "fetch", "show", "view", "open", "retrieve", "load", "display", "inspect", "see", "look at", "details", "describe", "info", "check"},
	{"run", "execute", "invoke", "trigger", "start", "launch", "call", "kick off", "dispatch", "fire", "rerun"},
	{"stop", "cancel", "abort", "kill", "terminate", "halt", "end", "interrupt"},
	{"pause", "suspend", "freeze", "disable", "deactivate", "mute"},
	{"resume", "restore", "unpause", "continue", "enable", "activate", "reactivate", "restart"},
	{"close", "resolve", "finish", "complete", "done", "mark done", "fix", "fixed"},
	{"reopen", "re-open", "unresolve"},
	{"archive", "hide", "shelve"},
	{"copy", "duplicate", "clone", "fork", "replicate"},
	{"move", "relocate", "transfer", "migrate", "reorder", "reparent", "rename"},
	{"upload", "attach", "import", "push"},
	{"download", "export", "save", "pull", "dump", "fetch"},
	{"merge", "combine", "integrate", "land", "squash"},
	{"assign", "assignee", "reassign", "allocate", "delegate", "hand off", "owner"},
	{"approve", "approval", "accept", "sign off", "lgtm", "review"},
	{"reject", "decline", "deny", "dismiss", "request changes"},
	{"deploy", "deployment", "release", "ship", "publish", "rollout", "roll out", "go live"},
	{"rollback", "roll back", "revert", "undo"},
	{"invite", "add member", "onboard", "grant"},
	{"analyze", "analyse", "analysis", "investigate", "diagnose", "debug", "troubleshoot", "root cause", "explain", "why"},
	{"summary", "summarize", "summarise", "overview", "digest", "recap", "report", "stats"},
	{"count", "total", "number of", "how many", "tally"},
	{"compare", "diff", "difference", "delta", "changes", "what changed"},
	{"validate", "verify", "check", "lint", "test", "assert"},
	{"wait", "sleep", "until", "poll"},
	{"convert", "translate", "transform"},
	{"generate", "produce", "render", "draw", "paint", "synthesize", "make", "create"},
	{"schedule", "book", "plan", "arrange", "reserve"},
	{"subscribe", "follow", "watch", "watcher", "notify me"},
	{"unsubscribe", "unfollow", "unwatch"},
	{"star", "favorite", "favourite", "bookmark", "pin"},
	{"login", "log in", "sign in", "authenticate", "auth"},
	{"count", "usage", "quota", "limit", "consumption"},
	{"multiple", "many", "several", "batch", "bulk", "at once", "at the same time", "simultaneously", "in parallel", "concurrently"},
	{"metadata", "info", "information", "attributes", "properties", "stat"},

	// Work tracking.
	{"issue", "ticket", "bug", "task", "story", "work item", "workitem", "defect", "problem", "card", "todo", "to do"},
	{"epic", "initiative", "feature"},
	{"sprint", "iteration", "cycle", "milestone"},
	{"backlog", "queue", "board"},
	{"priority", "prioritize", "prioritise", "reprioritize", "urgency", "severity", "rank"},
	{"status", "state", "progress", "stage", "transition", "workflow"},
	{"label", "tag", "category", "categorize", "topic"},
	{"estimate", "worklog", "time spent", "spent", "log work", "log time", "hours"},
	{"due", "deadline", "due date", "dates"},
	{"subtask", "sub-task", "sub issue", "sub-issue", "child issue", "child"},
	{"link", "relate", "relation", "relationship", "dependency", "depends on", "blocked by", "blocks"},
	{"comment", "reply", "note", "remark", "feedback", "respond", "answer"},
	{"mention", "ping", "tag someone"},

	// Code hosting.
	{"pull request", "pr", "merge request", "mr", "code review", "change request", "patchset"},
	{"repo", "repository", "codebase", "project", "git repo", "source code"},
	{"branch", "ref", "feature branch"},
	{"commit", "changeset", "revision", "sha", "checkin", "check in"},
	{"release", "version", "tag", "changelog"},
	{"file", "document", "doc", "attachment", "blob"},
	{"folder", "directory", "dir", "path"},
	{"content", "contents", "body", "text", "source"},
	{"code", "source code", "snippet", "gist"},
	{"pipeline", "workflow", "build", "ci", "action", "actions", "job"},
	{"log", "logs", "logging", "output", "console", "trace"},
	{"blame", "annotate", "who changed", "author"},
	{"vulnerability", "security alert", "cve", "advisory", "vuln", "security issue", "exposure", "dependabot"},
	{"secret", "token", "credential", "password", "api key", "key", "leaked"},
	{"dependency", "package", "library", "module", "provider", "plugin"},

	// People and organisations.
	{"user", "account", "member", "person", "people", "profile", "collaborator", "teammate", "colleague", "identity", "contact", "staff", "employee", "who is", "who are", "whoever"},
	{"who am i", "whoami", "current user", "authenticated user", "my account", "my profile", "my identity"},
	{"team", "group", "squad", "crew"},
	{"organization", "organisation", "org", "company", "tenant", "enterprise"},
	{"workspace", "space", "environment", "project"},
	{"permission", "access", "role", "right", "privilege", "grant", "acl", "restriction", "policy"},

	// Communication.
	{"message", "msg", "chat", "dm", "direct message", "post", "text"},
	{"send", "post", "notify", "ping", "announce", "broadcast", "deliver", "say", "tell", "let know", "share", "email"},
	{"email", "e-mail", "mail", "inbox", "mailbox"},
	{"notification", "notifications", "alert", "inbox", "unread", "mention"},
	{"channel", "room", "conversation", "group chat", "chatroom"},
	{"thread", "replies", "conversation", "discussion"},
	{"reaction", "react", "emoji", "thumbs up"},
	{"meeting", "event", "appointment", "calendar", "agenda", "invite", "call", "standup", "stand-up", "sync"},
	{"available", "availability", "free", "free time", "busy", "slot", "slots", "open slot"},

	// Documents and knowledge.
	{"page", "wiki", "article", "doc", "document", "note", "knowledge base", "kb", "confluence", "notion"},
	{"documentation", "docs", "manual", "guide", "reference", "help", "how to"},
	{"template", "blueprint", "boilerplate", "scaffold"},
	{"markdown", "md"},
	{"image", "picture", "photo", "img", "graphic", "illustration", "figure"},
	{"pdf", "print"},
	{"database", "data source", "datasource", "db", "table"},
	{"block", "paragraph", "section"},
	{"history", "changelog", "activity", "audit", "revisions", "versions", "timeline"},
	{"entity", "node", "record", "object", "item"},
	{"observation", "fact", "memory", "remember", "knowledge"},

	// Browsers and the web.
	{"navigate", "go to", "visit", "browse", "open url", "load page", "goto"},
	{"website", "site", "web page", "webpage", "url", "page", "link", "address"},
	{"screenshot", "screen capture", "capture", "snapshot", "screengrab"},
	{"click", "press", "tap", "select"},
	{"fill", "enter", "input", "fill in", "fill out", "type in", "type into"},
	{"form", "field", "input", "box", "textbox", "text box", "search box", "text field", "textarea"},
	{"button", "element", "checkbox", "control", "widget"},
	{"hover", "mouse over", "mouseover"},
	{"scroll", "wheel"},
	{"tab", "window", "popup"},
	{"keyboard", "key", "keystroke", "shortcut", "hotkey"},
	{"dialog", "modal", "popup", "alert", "prompt", "confirm"},
	{"javascript", "js", "script", "evaluate", "eval"},
	{"cookie", "cookies", "session", "storage", "localstorage", "local storage"},
	{"html", "dom", "markup", "source", "element"},
	{"scrape", "crawl", "extract", "spider", "harvest"},
	{"web", "internet", "online", "google", "search engine", "the web"},
	{"request", "http", "network", "traffic", "api call"},

	// Data and infrastructure.
	{"sql", "query", "select", "statement"},
	{"table", "tables", "schema", "columns"},
	{"migration", "migrate", "schema change", "alter table"},
	{"row", "rows", "record", "records", "entry", "entries"},
	{"bucket", "storage", "object storage", "s3", "r2", "blob storage"},
	{"cache", "kv", "key value", "key-value", "redis"},
	{"function", "lambda", "worker", "workers", "serverless", "edge function"},
	{"server", "host", "instance", "machine", "vm", "node"},
	{"container", "docker", "pod"},
	{"cluster", "kubernetes", "k8s"},
	{"dns", "domain", "zone", "hostname", "nameserver"},
	{"certificate", "cert", "tls", "ssl"},
	{"ip", "ip address", "address"},
	{"config", "configuration", "settings", "setting", "preferences", "options", "setup", "set up"},
	{"variable", "var", "env", "environment variable", "env var"},
	{"infrastructure", "terraform", "iac", "stack", "state"},
	{"cost", "price", "pricing", "billing", "spend", "charges", "fee"},

	// Observability and operations.
	{"error", "exception", "crash", "failure", "fault", "problem", "broken", "failing"},
	{"stacktrace", "stack trace", "traceback", "backtrace"},
	{"monitor", "monitoring", "uptime", "health check", "healthcheck", "ping", "probe", "goes down", "go down", "went down", "is down", "is up"},
	{"alert", "alarm", "alerting", "rule", "threshold"},
	{"incident", "outage", "downtime", "sev", "emergency", "postmortem"},
	{"oncall", "on call", "on-call", "pager", "pager duty", "pagerduty", "rota", "rotation", "shift", "responsible"},
	{"metric", "metrics", "measurement", "stat", "statistics", "timeseries", "time series", "gauge", "counter", "latency", "throughput", "percentile", "p99", "p95", "cpu", "error rate"},
	{"dashboard", "panel", "chart", "graph", "visualization", "visualisation"},
	{"latency", "slow", "performance", "duration", "response time", "speed"},
	{"health", "healthy", "status", "up", "down", "available", "availability"},
	{"trace", "span", "tracing", "distributed tracing"},
	{"profile", "profiling", "flamegraph", "cpu"},
	{"silence", "mute", "snooze", "suppress", "acknowledge", "ack"},

	// Commerce.
	{"customer", "client", "buyer", "payer", "shopper"},
	{"payment", "charge", "pay", "transaction", "payment intent"},
	{"invoice", "bill", "billing", "receipt"},
	{"refund", "reimburse", "money back", "chargeback", "return"},
	{"subscription", "plan", "recurring", "membership", "renewal"},
	{"product", "item", "sku", "catalog"},
	{"price", "pricing", "amount", "rate", "fee"},
	{"coupon", "discount", "promo", "promo code", "promotion", "voucher"},
	{"dispute", "chargeback", "contest"},
	{"balance", "funds", "account balance", "money", "payout"},
	{"payment link", "checkout", "checkout link", "pay link"},

	// Places and time.
	{"location", "address", "place", "places", "spot", "venue"},
	{"geocode", "coordinates", "latitude", "longitude", "lat", "lng", "gps"},
	{"directions", "route", "navigation", "how to get", "itinerary"},
	{"distance", "how far", "how long", "travel time", "eta", "drive", "driving", "travel", "commute", "trip"},
	{"elevation", "altitude", "height"},
	{"nearby", "near", "around", "local", "close to"},
	{"time", "clock", "current time", "now", "what time"},
	{"timezone", "time zone", "tz", "utc"},
	{"date", "day", "dates", "calendar date"},
	{"weather", "forecast", "temperature"},

	// Reasoning aids.
	{"think", "reason", "step by step", "plan", "brainstorm", "sequential thinking"},
}

// relatedOneWay are relations that hold in one direction only, for words
// whose other senses are common in tool catalogs: to fill a field is to
// type into it, but "issue types" have nothing to do with typing, and a
// "file" is mostly a noun. Like relatedGroups, the map is read-only.
var relatedOneWay = map[string][]string{
	"fill":       {"type"},
	"fill in":    {"type"},
	"fill out":   {"type"},
	"enter":      {"type"},
	"input":      {"type"},
	"type in":    {"type"},
	"type into":  {"type"},
	"file a":     {"create", "add", "new"},
	"file an":    {"create", "add", "new"},
	"everything": {"list"},
}

// queryFillerPhrases are word sequences that qualify a request without
// naming a task; their words alone would ("right" → permissions, "make" →
// create, "figure" → image).
var queryFillerPhrases = [][]string{
	{"right", "now"}, {"right", "away"}, {"at", "the", "moment"}, {"make", "sure"},
	{"find", "out"}, {"figure", "out"}, {"take", "a", "look"}, {"have", "a", "look"},
	{"as", "soon", "as", "possible"}, {"for", "example"},
	{"is", "there", "a", "way"}, {"how", "do", "i"}, {"how", "can", "i"},
}

// queryFillerWords are words that agents put around a need ("I need a tool
// that can ...") but that say nothing about which tool fits. They are
// dropped from queries only; the English stop list already covers articles,
// pronouns and prepositions.
var queryFillerWords = map[string]bool{
	"need": true, "needs": true, "want": true, "wants": true, "wanted": true,
	"please": true, "pls": true, "help": true, "tool": true, "tools": true,
	"way": true, "ways": true, "something": true, "anything": true,
	"somehow": true, "able": true, "can": true, "let": true, "lets": true,
	"use": true, "using": true, "via": true, "thing": true, "things": true,
	"stuff": true, "just": true, "also": true, "really": true,
	"actually": true, "maybe": true, "perhaps": true, "basically": true,
	"quickly": true, "currently": true, "specific": true, "specified": true,
	"certain": true, "particular": true, "given": true,
	"appropriate": true, "relevant": true, "corresponding": true,
	"respective": true, "exact": true, "exactly": true, "possible": true,
	"etc": true, "someone": true, "somebody": true, "whatever": true,
	"try": true, "trying": true, "going": true, "gonna": true, "wanna": true,
	"like": true, "would": true, "could": true, "should": true, "might": true,
	"must": true, "will": true, "shall": true, "may": true,
	"one": true, "ones": true, "lot": true, "lots": true, "bunch": true,
	"every": true, "within": true, "across": true, "inside": true,
	"onto": true, "per": true, "whether": true, "someplace": true,
	"programmatically": true, "automatically": true, "assistant": true,
	"give": true, "me": true, "us": true, "know": true,
	"provide": true, "located": true,
	// Time words that qualify the request rather than name the task.
	"now": true, "lately": true, "recently": true, "soon": true, "yet": true,
	"still": true, "already": true, "ever": true, "moment": true,
	"today": true, "tonight": true, "tomorrow": true, "yesterday": true,
}
