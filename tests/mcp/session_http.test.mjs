// SPDX-License-Identifier: BSD-3-Clause
// The scripted assistant session of session.test.mjs again, over Streamable
// HTTP (see sdk_http.test.mjs): each step still finds what the next needs
// in the structured answers.
process.env.TD_MCP_TRANSPORT = 'http';
await import('./session.test.mjs');
