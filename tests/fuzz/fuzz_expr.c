// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzz the expression engine: any text must parse or fail with a message,
 * and whatever parses must bind and evaluate without crashing or leaking.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

static int slot_zero(void *ctx, const char *name)
{
	(void)ctx;
	if (name[0] == '\0')
		abort(); /* every name has at least one character */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double samples[] = {0, 1.5, -3, NAN};
	char err[256];
	char *text = malloc(size + 1);
	struct td_expr *e;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	e = td_expr_parse(text, err, sizeof(err));
	free(text);
	if (e == NULL)
		return 0;
	for (size_t i = 0; i < td_expr_name_count(e); i++)
		if (strlen(td_expr_name(e, i)) > size)
			abort(); /* a name longer than the text that holds it */
	if (td_expr_bind(e, slot_zero, NULL, err, sizeof(err)) != 0)
		abort();
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		(void)td_expr_eval(e, &samples[i]);
	td_expr_free(e);
	return 0;
}
