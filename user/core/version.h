/* SPDX-License-Identifier: BSD-3-Clause */
/* The one version string: `topdown version` and the MCP serverInfo both print it. */
#ifndef TOPDOWN_VERSION_H
#define TOPDOWN_VERSION_H

#ifndef TOPDOWN_VERSION
#define TOPDOWN_VERSION "0.1.0"
#endif

#endif
