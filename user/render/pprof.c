// SPDX-License-Identifier: BSD-3-Clause
/*
 * pprof export (pprof.h says what goes where). The messages are protobuf-c's,
 * generated from user/render/profile.proto; protobuf-c encodes them and
 * zlib gzips the bytes on their way to the file, so the encoded profile is
 * never held whole in memory.
 *
 * Each message lives in an allocation of its own, with the arrays its
 * pointers refer to beside it (struct pb_sample, struct pb_location), so
 * the arrays of message pointers the Profile wants can grow while they
 * fill. The message is the first member: the pointer the Profile holds is
 * the allocation's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "array.h"
#include "hot.h"
#include "name_index.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "version.h"

#define SAMPLE_MAX_LABELS 4 /* thread, tid, pid, truncated */

struct pb_sample {
	Perftools__Profiles__Sample msg;
	int64_t value;
	Perftools__Profiles__Label labels[SAMPLE_MAX_LABELS];
	Perftools__Profiles__Label *label_ptrs[SAMPLE_MAX_LABELS];
	uint64_t location_ids[]; /* leaf first */
};

struct pb_location {
	Perftools__Profiles__Location msg;
	Perftools__Profiles__Line line;
	Perftools__Profiles__Line *line_ptr;
};

/* Everything deduplicates through a name index: a message's id is its position + 1. */
struct pprof_builder {
	struct td_name_index strings, functions, mappings, locations;
	Perftools__Profiles__Function **functions_pb;
	Perftools__Profiles__Mapping **mappings_pb;
	Perftools__Profiles__Location **locations_pb;
	Perftools__Profiles__Sample **samples_pb;
	/* The messages made so far: behind the index's count only when out of memory. */
	size_t nr_functions, nr_mappings, nr_locations, nr_samples;
	size_t functions_cap, mappings_cap, locations_cap, samples_cap;
	bool failed; /* out of memory: later steps do nothing, the caller sees -ENOMEM */
};

/* The string's index in the string table (entry 0 is ""). */
static int64_t string_at(struct pprof_builder *b, const char *s)
{
	bool added;
	int64_t at = b->failed ? -ENOMEM : td_name_index_get(&b->strings, s, &added);

	if (at < 0) {
		b->failed = true;
		return 0;
	}
	return at;
}

/* The position of key in ix, and whether it is new; -1 when out of memory (key NULL: asprintf failed). */
static int64_t intern(struct pprof_builder *b, struct td_name_index *ix, const char *key, bool *added)
{
	int64_t at = b->failed || !key ? -ENOMEM : td_name_index_get(ix, key, added);

	if (at < 0) {
		b->failed = true;
		return -1;
	}
	return at;
}

static uint64_t function_id(struct pprof_builder *b, const char *name, const char *file)
{
	Perftools__Profiles__Function *fn, **grown;
	char *key = NULL;
	bool added = false;
	int64_t at;

	if (asprintf(&key, "%s%c%s", name, '\x1f', file ? file : "") < 0)
		key = NULL;
	at = intern(b, &b->functions, key, &added);
	free(key);
	if (at < 0 || !added)
		return at < 0 ? 0 : (uint64_t)at + 1;
	grown = td_grow(b->functions_pb, &b->functions_cap, b->nr_functions, sizeof(*grown));
	if (grown)
		b->functions_pb = grown;
	if (!grown || !(fn = malloc(sizeof(*fn)))) {
		b->failed = true;
		return 0;
	}
	b->functions_pb[b->nr_functions++] = fn;
	perftools__profiles__function__init(fn);
	fn->id = (uint64_t)at + 1;
	fn->name = fn->system_name = string_at(b, name);
	fn->filename = string_at(b, file ? file : "");
	return fn->id;
}

/* The module's mapping, which learns from each frame what symbolization found. */
static uint64_t mapping_id(struct pprof_builder *b, const struct td_frame *f)
{
	Perftools__Profiles__Mapping *m, **grown;
	bool added = false;
	int64_t at = intern(b, &b->mappings, f->module, &added);

	if (at < 0)
		return 0;
	if (added) {
		grown = td_grow(b->mappings_pb, &b->mappings_cap, b->nr_mappings, sizeof(*grown));
		if (grown)
			b->mappings_pb = grown;
		if (!grown || !(m = malloc(sizeof(*m)))) {
			b->failed = true;
			return 0;
		}
		b->mappings_pb[b->nr_mappings++] = m;
		perftools__profiles__mapping__init(m);
		m->id = (uint64_t)at + 1;
		m->filename = string_at(b, f->module);
		m->has_functions = m->has_filenames = m->has_line_numbers = true;
	}
	m = b->mappings_pb[at];
	/* As if loaded at 0 (offsets are all we keep): the range covers every address seen. */
	if (f->offset >= m->memory_limit)
		m->memory_limit = f->offset + 1;
	m->has_functions &= f->function != NULL;
	m->has_filenames &= f->file != NULL;
	m->has_line_numbers &= f->line != 0;
	return m->id;
}

static uint64_t location_id(struct pprof_builder *b, const struct td_frame *f)
{
	Perftools__Profiles__Location **grown;
	struct pb_location *loc;
	char *key = NULL;
	bool added = false;
	int64_t at;

	/* Every field of the frame: frames equal in all of them are one frame (td_profile_intern_frame). */
	if (asprintf(&key, "%c%s%c%c%s%c%" PRIx64 "%c%s%c%" PRIu32 "%c%d", f->function ? '+' : '-',
		     f->function ? f->function : "", '\x1f', f->module ? '+' : '-', f->module ? f->module : "", '\x1f',
		     f->offset, '\x1f', f->file ? f->file : "", '\x1f', f->line, '\x1f', f->kernel) < 0)
		key = NULL;
	at = intern(b, &b->locations, key, &added);
	free(key);
	if (at < 0 || !added)
		return at < 0 ? 0 : (uint64_t)at + 1;
	grown = td_grow(b->locations_pb, &b->locations_cap, b->nr_locations, sizeof(*grown));
	if (grown)
		b->locations_pb = grown;
	if (!grown || !(loc = calloc(1, sizeof(*loc)))) {
		b->failed = true;
		return 0;
	}
	b->locations_pb[b->nr_locations++] = &loc->msg;
	perftools__profiles__location__init(&loc->msg);
	loc->msg.id = (uint64_t)at + 1;
	if (f->module) {
		loc->msg.mapping_id = mapping_id(b, f);
		loc->msg.address = f->offset;
	}
	/* Unnamed but in a module: the address alone, for a viewer that has the binary to name it. */
	if (f->function || !f->module) {
		perftools__profiles__line__init(&loc->line);
		loc->line.function_id = function_id(b, f->function ? f->function : "[unknown]", f->file);
		loc->line.line = f->line;
		loc->line_ptr = &loc->line;
		loc->msg.line = &loc->line_ptr;
		loc->msg.n_line = 1;
	}
	return loc->msg.id;
}

static void add_label(struct pprof_builder *b, struct pb_sample *s, const char *key, const char *str, int64_t num)
{
	Perftools__Profiles__Label *l = &s->labels[s->msg.n_label];

	perftools__profiles__label__init(l);
	l->key = string_at(b, key);
	if (str)
		l->str = string_at(b, str);
	else
		l->num = num;
	s->label_ptrs[s->msg.n_label++] = l;
}

/* One stack as one Sample; loc_of maps the profile's frames to location ids. */
static void add_sample(struct pprof_builder *b, const struct td_profile_stack *st, const uint64_t *loc_of)
{
	struct pb_sample *s = calloc(1, sizeof(*s) + st->nr_frames * sizeof(s->location_ids[0]));
	Perftools__Profiles__Sample **grown = td_grow(b->samples_pb, &b->samples_cap, b->nr_samples, sizeof(*grown));
	char comm[TD_PROFILE_COMM_LEN + 1];

	if (grown)
		b->samples_pb = grown;
	if (!s || !grown) {
		free(s);
		b->failed = true;
		return;
	}
	perftools__profiles__sample__init(&s->msg);
	for (uint32_t i = 0; i < st->nr_frames; i++) /* ours outermost first, pprof's leaf first */
		s->location_ids[i] = loc_of[st->frames[st->nr_frames - 1 - i]];
	s->msg.location_id = s->location_ids;
	s->msg.n_location_id = st->nr_frames;
	s->value = (int64_t)st->count;
	s->msg.value = &s->value;
	s->msg.n_value = 1;
	s->msg.label = s->label_ptrs;
	snprintf(comm, sizeof(comm), "%.*s", TD_PROFILE_COMM_LEN, st->comm);
	add_label(b, s, "thread", comm, 0);
	add_label(b, s, "tid", NULL, st->tid);
	add_label(b, s, "pid", NULL, st->pid);
	if (st->truncated)
		add_label(b, s, "truncated", "true", 0);
	b->samples_pb[b->nr_samples++] = &s->msg;
}

static void add_profile(struct pprof_builder *b, const struct td_profile *p, const char *thread)
{
	/* Location ids of the profile's frames, found on first use: frames of threads out of scope get none. */
	uint64_t *loc_of = calloc(p->nr_frames ? p->nr_frames : 1, sizeof(*loc_of));

	if (!loc_of)
		b->failed = true;
	for (size_t i = 0; !b->failed && i < p->nr_stacks; i++) {
		const struct td_profile_stack *st = &p->stacks[i];

		if (!td_profile_stack_in_scope(st, thread))
			continue;
		for (uint32_t f = 0; f < st->nr_frames; f++)
			if (!loc_of[st->frames[f]])
				loc_of[st->frames[f]] = location_id(b, &p->frames[st->frames[f]]);
		add_sample(b, st, loc_of);
	}
	free(loc_of);
}

static void builder_free(struct pprof_builder *b)
{
	/* The message pointers are their allocations' (first members). */
	for (size_t i = 0; i < b->nr_samples; i++)
		free(b->samples_pb[i]);
	for (size_t i = 0; i < b->nr_locations; i++)
		free(b->locations_pb[i]);
	for (size_t i = 0; i < b->nr_functions; i++)
		free(b->functions_pb[i]);
	for (size_t i = 0; i < b->nr_mappings; i++)
		free(b->mappings_pb[i]);
	free(b->samples_pb);
	free(b->locations_pb);
	free(b->functions_pb);
	free(b->mappings_pb);
	td_name_index_free(&b->strings);
	td_name_index_free(&b->functions);
	td_name_index_free(&b->mappings);
	td_name_index_free(&b->locations);
}

/* ---- gzip on the way out: protobuf-c appends bytes, zlib deflates them into the file ---- */

struct gzip_sink {
	ProtobufCBuffer base; /* first: protobuf-c hands this pointer back */
	z_stream z;
	FILE *out;
	bool failed;
	size_t staged;
	uint8_t stage[64 * 1024]; /* protobuf-c appends field by field: deflate in larger steps */
};

/* Deflates the staged bytes with flush (Z_NO_FLUSH, or Z_FINISH to end the stream). */
static void gzip_deflate(struct gzip_sink *g, int flush)
{
	uint8_t chunk[64 * 1024];
	int ret;

	g->z.next_in = g->stage;
	g->z.avail_in = (uInt)g->staged;
	g->staged = 0;
	do {
		size_t have;

		g->z.next_out = chunk;
		g->z.avail_out = sizeof(chunk);
		ret = deflate(&g->z, flush);
		have = sizeof(chunk) - g->z.avail_out;
		if (ret == Z_STREAM_ERROR || fwrite(chunk, 1, have, g->out) != have)
			g->failed = true;
	} while (!g->failed && (g->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END)));
}

static void gzip_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gzip_sink *g = (struct gzip_sink *)buffer;

	while (len && !g->failed) {
		size_t n = sizeof(g->stage) - g->staged < len ? sizeof(g->stage) - g->staged : len;

		memcpy(g->stage + g->staged, data, n);
		g->staged += n;
		data += n;
		len -= n;
		if (g->staged == sizeof(g->stage))
			gzip_deflate(g, Z_NO_FLUSH);
	}
}

/* The profile, encoded and gzipped into out: 0, -ENOMEM or -EIO. */
static int write_gzipped(FILE *out, const Perftools__Profiles__Profile *profile, char *err, size_t errlen)
{
	struct gzip_sink *g = calloc(1, sizeof(*g));
	int ret = 0;

	/* windowBits 15 + 16: the gzip wrapper (header and CRC), which pprof readers expect */
	if (!g || deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		snprintf(err, errlen, "out of memory compressing the profile");
		return -ENOMEM;
	}
	g->base.append = gzip_append;
	g->out = out;
	errno = 0;
	protobuf_c_message_pack_to_buffer(&profile->base, &g->base);
	if (!g->failed)
		gzip_deflate(g, Z_FINISH);
	if (g->failed || fflush(out) != 0 || ferror(out)) {
		snprintf(err, errlen, "cannot write the profile: %s; check the output has room", strerror(errno ? errno : EIO));
		ret = -EIO;
	}
	deflateEnd(&g->z);
	free(g);
	return ret;
}

/* ---- the Profile ---- */

/* -EINVAL unless every run sampled the same event (a sample of each counts the same thing). */
static int check_one_event(const struct td_run *const *runs, size_t n, char *err, size_t errlen)
{
	const struct td_profile *first = runs[0]->profile;

	for (size_t i = 1; i < n; i++) {
		const struct td_profile *p = runs[i]->profile;
		bool same_event = strcmp(p->event, first->event) == 0;

		if (same_event && strcmp(p->unit, first->unit) == 0)
			continue;
		snprintf(err, errlen, "the runs sampled different events (%s, %s); select one event's runs "
			 "(--label KEY=VALUE or --run-id ID)", same_event ? first->unit : first->event,
			 same_event ? p->unit : p->event);
		return -EINVAL;
	}
	return 0;
}

/* The comment lines: topdown and what was exported, then each run. */
static int64_t *comments(struct pprof_builder *b, const struct td_run *const *runs, size_t n, const char *thread)
{
	int64_t *ids = calloc(n + 1, sizeof(*ids));
	char line[256];

	if (!ids) {
		b->failed = true;
		return NULL;
	}
	snprintf(line, sizeof(line), "topdown %s: %s sampled in %zu run%s%s%s", TOPDOWN_VERSION, runs[0]->profile->event,
		 n, n == 1 ? "" : "s", thread ? ", thread " : "", thread ? thread : "");
	ids[0] = string_at(b, line);
	for (size_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "run %s%s%s", runs[i]->id, runs[i]->process ? " of " : "",
			 runs[i]->process ? runs[i]->process : "");
		ids[i + 1] = string_at(b, line);
	}
	return ids;
}

int td_pprof_write(FILE *out, const struct td_run *const *runs, size_t n, const char *thread,
		   char *err, size_t errlen)
{
	Perftools__Profiles__Profile profile = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType sample_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *sample_types[] = { &sample_type };
	struct pprof_builder b = { 0 };
	const struct td_profile *newest;
	int64_t *comment_ids = NULL;
	int ret;

	if (n == 0) {
		snprintf(err, errlen, "no run with a profile was selected; collect with --sample first");
		return TD_QUERY_NOTHING;
	}
	ret = check_one_event(runs, n, err, errlen);
	if (ret)
		return ret;
	newest = runs[0]->profile;
	string_at(&b, ""); /* entry 0, as the format wants */
	for (size_t i = 0; i < n; i++)
		add_profile(&b, runs[i]->profile, thread);
	if (!b.failed && b.nr_samples == 0) {
		snprintf(err, errlen, "the selected runs have no stacks%s; drop --thread or widen the selection",
			 thread ? " of that thread" : "");
		builder_free(&b);
		return TD_QUERY_NOTHING;
	}

	sample_type.type = string_at(&b, newest->unit);
	sample_type.unit = string_at(&b, "count");
	profile.sample_type = sample_types;
	profile.n_sample_type = 1;
	period_type.type = string_at(&b, newest->event);
	if (newest->period) {
		period_type.unit = string_at(&b, "count");
		profile.period = (int64_t)newest->period;
	} else if (newest->frequency_hz) {
		period_type.unit = string_at(&b, "nanoseconds");
		profile.period = (int64_t)(1000000000ull / newest->frequency_hz);
	}
	profile.period_type = &period_type;
	for (size_t i = 0; i < n; i++) {
		if (runs[i]->started_ns > 0 && (!profile.time_nanos || runs[i]->started_ns < profile.time_nanos))
			profile.time_nanos = runs[i]->started_ns;
		if (runs[i]->started_ns > 0 && runs[i]->ended_ns > runs[i]->started_ns)
			profile.duration_nanos += runs[i]->ended_ns - runs[i]->started_ns;
	}
	comment_ids = comments(&b, runs, n, thread);
	profile.comment = comment_ids;
	profile.n_comment = n + 1;

	if (b.failed) {
		snprintf(err, errlen, "out of memory building the pprof profile");
		ret = -ENOMEM;
	} else {
		profile.sample = b.samples_pb;
		profile.n_sample = b.nr_samples;
		profile.location = b.locations_pb;
		profile.n_location = b.nr_locations;
		profile.function = b.functions_pb;
		profile.n_function = b.nr_functions;
		profile.mapping = b.mappings_pb;
		profile.n_mapping = b.nr_mappings;
		profile.string_table = b.strings.keys;
		profile.n_string_table = b.strings.count;
		ret = write_gzipped(out, &profile, err, errlen);
	}
	free(comment_ids);
	builder_free(&b);
	return ret;
}
