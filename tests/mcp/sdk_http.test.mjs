// SPDX-License-Identifier: BSD-3-Clause
// Every check of sdk.test.mjs again, with the SDK's Streamable HTTP client
// (StreamableHTTPClientTransport) against `topdown mcp-serve --transport
// http`: the same answers whatever the transport. node --test runs each
// file in a process of its own, so the variable stays here.
process.env.TD_MCP_TRANSPORT = 'http';
await import('./sdk.test.mjs');
