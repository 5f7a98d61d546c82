package typescript

// DiscoveryModule declares the Code Mode discovery module,
// "@codemode/discovery": the specification version, the functions that
// list and describe the connected servers and their tools, and the types
// they return. Beside the fields the specification requires,
// ServerDescription has toolCount and modulePath, and ToolDefinition has
// declaration, the tool's TypeScript declaration at detail "full".
//
// It compiles with tsc --strict on its own and together with ErrorsModule
// and the output of DeclareModule, in a .d.ts file or a .ts script.
const DiscoveryModule = `/** Finds the connected MCP servers and their tools. */
declare module "@codemode/discovery" {
  /** The version of the Code Mode specification the sandbox implements. */
  export const specVersion: string;

  /**
   * How much of each tool discovery returns: "name" gives toolName and exportName,
   * "description" adds description and annotations, and "full" adds inputSchema,
   * outputSchema and declaration.
   */
  export type DetailLevel = "name" | "description" | "full";

  /** A connected MCP server. */
  export interface ServerInfo {
    /** The server's normalized module path segment: its tools are the exports of "@codemode/servers/" + serverId. */
    serverId: string;
    /** The name the server reports. */
    serverName: string;
    /** The MCP capabilities the server declares, such as "tools". */
    capabilities?: string[];
  }

  /** A connected MCP server, described. */
  export interface ServerDescription extends ServerInfo {
    /** What the server says it is for. */
    description?: string;
    /** The version the server reports. */
    version?: string;
    /** How many tools the server has. */
    toolCount: number;
    /** The specifier to import the server's tools from, such as "@codemode/servers/shop". */
    modulePath: string;
  }

  /** A tool's MCP annotations: hints its server states about the tool's effects, which nothing enforces. */
  export interface ToolAnnotations {
    title?: string;
    /** The tool changes nothing. */
    readOnlyHint?: boolean;
    /** The tool may destroy or overwrite data. */
    destructiveHint?: boolean;
    /** Calling the tool again with the same input has no further effect. */
    idempotentHint?: boolean;
    /** The tool reaches outside its server, such as to the web. */
    openWorldHint?: boolean;
    [key: string]: unknown;
  }

  /** A tool, at detail "name" or "description". */
  export interface ToolSummary {
    /**
     * The tool's canonical MCP name, to recognise the tool by. No function takes it to call
     * the tool: code calls the function the server's module exports as exportName.
     */
    toolName: string;
    /** The name the server's module exports the tool's async function under. */
    exportName: string;
    /** What the tool does; from detail "description" on. */
    description?: string;
    /** The tool's MCP annotations; from detail "description" on. */
    annotations?: ToolAnnotations;
  }

  /** A tool, with its schemas and declaration at detail "full". */
  export interface ToolDefinition extends ToolSummary {
    /** The JSON Schema of the tool's input; at detail "full". */
    inputSchema?: Record<string, unknown>;
    /** The JSON Schema of the tool's structured result, when it has one; at detail "full". */
    outputSchema?: Record<string, unknown>;
    /** The TypeScript declaration of the tool's function and of its input and output types; at detail "full". */
    declaration?: string;
  }

  /** What searchTools found. */
  export interface SearchResults {
    /** The query, as given. */
    query: string;
    /** The matching tools, best match first, each with the serverId of its server. */
    results: Array<ToolDefinition & { serverId: string }>;
  }

  /** Options of listTools. */
  export interface ListToolsOptions {
    /** How much of each tool to return; "description" when left out. */
    detail?: DetailLevel;
  }

  /** Options of searchTools. */
  export interface SearchToolsOptions {
    /** How much of each tool to return; "description" when left out. */
    detail?: DetailLevel;
    /** Search only the server with this serverId. */
    serverId?: string;
    /** The most results to return, an integer; the host sets the default. */
    limit?: number;
  }

  /** Lists the connected servers. */
  export function listServers(): Promise<ServerInfo[]>;

  /**
   * Describes one connected server.
   * @param serverId - The server's serverId, as listServers returns it.
   * @throws ServerNotFoundError when no connected server has that serverId.
   */
  export function describeServer(serverId: string): Promise<ServerDescription>;

  /**
   * Lists the tools of one server.
   * @param serverId - The server's serverId, as listServers returns it.
   * @throws ServerNotFoundError when no connected server has that serverId.
   */
  export function listTools(serverId: string, options?: ListToolsOptions): Promise<ToolDefinition[]>;

  /**
   * Returns the definition of one tool of a server.
   * @param serverId - The server's serverId, as listServers returns it.
   * @param toolName - The tool's canonical MCP name or its export name.
   * @throws ServerNotFoundError when no connected server has that serverId.
   * @throws ToolNotFoundError when the server has no such tool.
   */
  export function getTool(serverId: string, toolName: string): Promise<ToolDefinition>;

  /**
   * Finds the tools that match a query, across all connected servers or on one.
   * @param query - What to look for, in words.
   */
  export function searchTools(query: string, options?: SearchToolsOptions): Promise<SearchResults>;
}
`

// ErrorsModule declares the Code Mode errors module, "@codemode/errors":
// CodemodeError, the base class of every error the sandbox throws, and one
// subclass for each kind of failure. Every error has a hint, one action
// that corrects it, and a code.
//
// It compiles with tsc --strict on its own and together with
// DiscoveryModule and the output of DeclareModule, in a .d.ts file or a
// .ts script.
const ErrorsModule = `/** The errors the Code Mode sandbox throws. Catch one with instanceof. */
declare module "@codemode/errors" {
  /** The base class of every error the sandbox throws. */
  export class CodemodeError extends Error {
    /** One action that corrects the error. */
    readonly hint: string;
    /** The kind of error, as a stable machine-readable string. */
    readonly code: string;
  }

  /** Thrown when the input of a tool call fails the tool's input schema; the tool was not called. */
  export class SchemaValidationError extends CodemodeError {
    /** The tool's canonical MCP name. */
    readonly toolName: string;
    /** The name the server's module exports the tool under. */
    readonly exportName: string;
    /** The serverId of the tool's server. */
    readonly serverId: string;
    /** A JSON Pointer to the failing part of the input, such as "/items/0/quantity"; "" for the whole input. */
    readonly path: string;
    /** What the schema expects there, as a type or a value. */
    readonly expected: string;
    /** What the input has there, as a type or a value. */
    readonly received: string;
    /** A minimal input the schema accepts, when the host has one. */
    readonly example?: unknown;
  }

  /** Thrown when a server has no tool by the name asked for. */
  export class ToolNotFoundError extends CodemodeError {
    /** The serverId of the server asked. */
    readonly serverId: string;
    /** The tool name asked for. */
    readonly toolName: string;
  }

  /** Thrown when no connected server has the serverId asked for. */
  export class ServerNotFoundError extends CodemodeError {
    /** The serverId asked for. */
    readonly serverId: string;
  }

  /** Thrown when a tool reports that the call failed (an MCP result with isError set). */
  export class ToolCallError extends CodemodeError {
    /** The tool's canonical MCP name. */
    readonly toolName: string;
    /** The name the server's module exports the tool under. */
    readonly exportName: string;
    /** The serverId of the tool's server. */
    readonly serverId: string;
    /** The kind of failure, as a stable machine-readable string. */
    readonly code: string;
    /** Whether the same call may succeed when made again. */
    readonly retryable: boolean;
    /** What the tool returned, unwrapped as a successful result would be, when it returned anything. */
    readonly result?: unknown;
  }

  /** Thrown when the server refuses the call because credentials are missing or invalid; calling again does not help until they are fixed. */
  export class AuthenticationError extends ToolCallError {}

  /**
   * Thrown when the script exceeds a limit of the sandbox, such as its time, its memory or
   * its number of tool calls. Past some limits the script stops; the response still holds
   * the logs written before.
   */
  export class SandboxLimitError extends CodemodeError {
    /** The name of the limit exceeded, such as "timeoutMs", "maxToolCalls" or "maxMemoryBytes". */
    readonly limit: string;
  }
}
`
