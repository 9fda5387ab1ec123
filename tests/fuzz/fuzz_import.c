// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzz the import path: any bytes must parse as perf stat output or fail
 * with a message naming a line, and whatever parses must map onto a model
 * and compute its tree (or be refused) without crashing or leaking.  The
 * first byte picks the model, so every vendor's event mapping is reached.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "kb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const models[] = { "skx", "spr", "adl", "neoverse-v2", "neoverse-n1", "zen4" };
	struct td_perf_stat *ps = NULL;
	struct td_import *imp = NULL;
	char err[512] = "";
	const struct td_kb *kb = td_kb_load(err, sizeof(err));

	if (!kb || !size)
		return 0;
	if (td_perf_stat_parse((const char *)data + 1, size - 1, &ps, err, sizeof(err)) != 0) {
		if (!err[0])
			abort(); /* every refusal says why */
		return 0;
	}
	if (!ps->n_counts)
		abort(); /* a file without counts is an error */
	for (size_t i = 0; i < ps->n_counts; i++)
		if (ps->counts[i].event >= ps->n_events ||
		    (ps->counts[i].unit >= 0 && (size_t)ps->counts[i].unit >= ps->n_units))
			abort();
	struct td_import_opts opts = {
		.model = td_kb_model(kb, models[data[0] % (sizeof(models) / sizeof(models[0]))]),
		.smt = -1,
		.source = "fuzz.csv",
	};
	if (td_import_build(ps, &opts, &imp, err, sizeof(err)) == 0)
		td_import_free(imp);
	else if (!err[0])
		abort();
	td_perf_stat_free(ps);
	return 0;
}
