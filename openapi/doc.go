// Package openapi turns a REST API's OpenAPI document into MCP tools: one
// tool per operation, whose handler sends the HTTP request the operation
// describes.
//
// Load reads a document (a file or an http(s) URL, YAML or JSON; OpenAPI
// 3.0 and 3.1 as they are, Swagger 2.0 converted to 3.0) with kin-openapi,
// resolving $refs, including those to files next to the document. New
// synthesises the tools: named after operationId (or after method and path
// when there is none, collisions numbered), with source "openapi" in
// _meta.codecall, the operation's tags and examples, an inputSchema that
// merges the path, query, header and cookie parameters and the JSON request
// body into one object, an outputSchema from the 2xx JSON response, and
// annotations from the HTTP method, so that the default policy asks before
// writes. Recursive schemas ($ref cycles) are kept as $defs.
//
// A call is checked against the operation (required parameters, path
// values), serialised as the document declares (path, query, header and
// cookie styles; JSON, form and multipart bodies), and sent only to the
// base URL's origin: redirects are followed only within that origin, and
// connections to loopback, private and link-local addresses are refused
// unless the base URL itself points there or the operator allows them
// (SSRF guard). Credentials (WithCredentials) are added to each request and
// never appear in tool descriptions; every text a tool returns goes through
// the redactor (WithRedactor), so an API that echoes one cannot leak it. Responses are capped in size; HTTP
// errors become tool errors with the status, a short excerpt of the body
// and a hint, carrying a toolerr code under toolerr.MetaKey.
//
// Package gateway serves a document as an app (an upstream of type
// openapi) through NewServer; the package has no dependency on the gateway.
package openapi
