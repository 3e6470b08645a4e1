// SPDX-License-Identifier: Apache-2.0
/*
 * pprof (perftools.profiles.Profile), gzip'd, in the Go runtime's CPU
 * profile convention so `go tool pprof` shows time: sample types
 * samples/count and cpu/nanoseconds (value = count, count * period),
 * period type cpu/nanoseconds.  A batch with off-CPU samples adds a third
 * type, off_cpu/nanoseconds: those samples have their time off the CPU
 * there and 0 in the other two (and the CPU ones 0 in it), and cpu stays
 * the default type.  Mappings and locations carry runtime
 * addresses (ELF address + load bias), which is what pprof's own
 * symbolizer expects; functions carry the names we have.  Labels:
 * thread.name, process.pid, thread.id, cpu.logical_number, all strings:
 * pprof drops a numeric label whose value is 0, and pid 0 (the idle task)
 * and cpu 0 are common.
 *
 * Only the mappings, locations and functions the samples reach are written.
 */
#include "rep_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfaddr.h"
#include "perftools/profiles/profile.pb-c.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

struct pp {
	const struct rep_batch *b;
	struct arena arena;
	struct rep_strtab strs;
	struct intern funcs;	 /* (name, filename) string ids -> index */
	PFunction *fs;		 /* their messages, set up as they come */
	uint64_t *loc_id;	 /* batch location -> pprof id, 0 = unused */
	uint64_t *map_id;	 /* batch mapping -> pprof id, 0 = unused */
	uint32_t n_locs, n_maps;
	bool offcpu; /* the off_cpu/nanoseconds sample type */
};

static int32_t str(struct pp *pp, const char *s)
{
	return rep_strtab_add(&pp->strs, s);
}

static PValueType *value_type(struct pp *pp, const char *type,
			      const char *unit)
{
	PValueType *v = arena_calloc(&pp->arena, 1, sizeof(*v));

	if (v) {
		perftools__profiles__value_type__init(v);
		v->type = str(pp, type);
		v->unit = str(pp, unit);
	}
	return v;
}

/* Number the locations and mappings the samples use, in first-use order. */
static int mark_used(struct pp *pp)
{
	const struct rep_batch *b = pp->b;
	uint32_t i, j;

	pp->loc_id = calloc(b->n_locations + 1, sizeof(*pp->loc_id));
	pp->map_id = calloc(b->n_mappings + 1, sizeof(*pp->map_id));
	if (!pp->loc_id || !pp->map_id)
		return -ENOMEM;
	for (i = 0; i < b->n_samples; i++) {
		const struct rep_sample *s = &b->samples[i];

		if (s->stack >= b->n_stacks)
			continue;
		for (j = 0; j < b->stacks[s->stack].n; j++) {
			uint32_t l = b->stacks[s->stack].locations[j], m;

			if (l >= b->n_locations || pp->loc_id[l] ||
			    rep_inl_member(b->locations, l))
				continue;
			pp->loc_id[l] = ++pp->n_locs;
			m = b->locations[l].mapping;
			if (m < b->n_mappings && !pp->map_id[m])
				pp->map_id[m] = ++pp->n_maps;
		}
	}
	return 0;
}

static int build_mappings(struct pp *pp, PProfile *p)
{
	const struct rep_batch *b = pp->b;
	bool *unnamed;
	uint32_t i;

	unnamed = arena_calloc(&pp->arena, b->n_mappings + 1, sizeof(*unnamed));
	if (!REP_MSG_TABLE(&pp->arena, p->mapping, p->n_mapping, pp->n_maps,
			   perftools__profiles__mapping__init) ||
	    !unnamed)
		return -ENOMEM;
	for (i = 0; i < b->n_locations; i++)
		if (pp->loc_id[i] && b->locations[i].mapping < b->n_mappings &&
		    !b->locations[i].function)
			unnamed[b->locations[i].mapping] = true;
	for (i = 0; i < b->n_mappings; i++) {
		const struct rep_mapping *rm = &b->mappings[i];
		PMapping *m;

		if (!pp->map_id[i])
			continue;
		m = p->mapping[pp->map_id[i] - 1];
		m->id = pp->map_id[i];
		m->memory_start = rm->start;
		m->memory_limit = rm->limit;
		m->file_offset = rm->file_offset;
		m->filename = str(pp, rm->path);
		m->build_id = str(pp, rm->gnu_build_id);
		/* has_functions stops pprof from symbolizing what we named. */
		m->has_functions = !unnamed[i];
	}
	return 0;
}

static uint64_t function_id(struct pp *pp, const struct rep_location *l,
			    PProfile *p)
{
	int32_t key[2] = { str(pp, l->function), str(pp, l->filename) };
	bool added;
	int64_t id = intern_add(&pp->funcs, key, sizeof(key), &added);

	if (id < 0)
		return 0;
	if (added) {
		/* ids come in order: function[id] is the next message */
		PFunction *f = &pp->fs[id];

		perftools__profiles__function__init(f);
		p->function[p->n_function++] = f;
		f->id = (uint64_t)id + 1;
		f->name = key[0];
		f->system_name = key[0];
		f->filename = key[1];
	}
	return (uint64_t)id + 1;
}

static int build_locations(struct pp *pp, PProfile *p)
{
	const struct rep_batch *b = pp->b;
	PLine *lines;
	uint32_t i;

	lines = arena_calloc(&pp->arena, pp->n_locs + 1, sizeof(*lines));
	/* a location of an inline chain names several functions: at most
	 * one per location of the batch (n_function counts those named, and
	 * only those are set up: function_id) */
	p->function = arena_calloc(&pp->arena, b->n_locations + 1,
				   sizeof(*p->function));
	pp->fs = arena_alloc(&pp->arena, b->n_locations + 1, sizeof(*pp->fs));
	if (!REP_MSG_TABLE(&pp->arena, p->location, p->n_location, pp->n_locs,
			   perftools__profiles__location__init) ||
	    !p->function || !pp->fs || !lines)
		return -ENOMEM;
	for (i = 0; i < b->n_locations; i++) {
		const struct rep_location *rl = &b->locations[i];
		uint64_t id = pp->loc_id[i];
		PLocation *l;

		if (!id)
			continue;
		l = p->location[id - 1];
		l->id = id;
		l->address = rl->address;
		if (rl->mapping < b->n_mappings) {
			l->mapping_id = pp->map_id[rl->mapping];
			if (rl->kind == FRAME_NATIVE)
				l->address = ea_runtime_addr(
					b->mappings[rl->mapping].bias, rl->address);
		}
		if (rl->function) {
			/* an inline chain: one Line per function, innermost
			 * first (pprof: the last is the caller the others
			 * were inlined into) */
			uint32_t n = rep_inl_chain_len(b->locations,
						       b->n_locations, i), k;

			l->line = arena_calloc(&pp->arena, n, sizeof(*l->line));
			if (!l->line)
				return -ENOMEM;
			for (k = 0; k < n; k++) {
				const struct rep_location *kl = &b->locations[i + k];
				PLine *ln = k ? arena_calloc(&pp->arena, 1,
								 sizeof(*ln)) :
						&lines[id - 1];

				if (!ln)
					return -ENOMEM;
				perftools__profiles__line__init(ln);
				ln->function_id = function_id(pp, kl, p);
				if (!ln->function_id)
					return -ENOMEM;
				ln->line = kl->line;
				l->line[l->n_line++] = ln;
			}
		}
	}
	return 0;
}

static PLabel *label(struct pp *pp, PLabel *l, const char *key,
		     const char *s, int64_t num)
{
	char tmp[24];

	if (!s) {
		snprintf(tmp, sizeof(tmp), "%" PRId64, num);
		s = tmp;
	}
	perftools__profiles__label__init(l);
	l->key = str(pp, key);
	l->str = str(pp, s);
	return l;
}

static int build_samples(struct pp *pp, PProfile *p)
{
	const struct rep_batch *b = pp->b;
	uint32_t i, j;

	p->sample = arena_calloc(&pp->arena, b->n_samples + 1, sizeof(*p->sample));
	if (!p->sample)
		return -ENOMEM;
	for (i = 0; i < b->n_samples; i++) {
		const struct rep_sample *rs = &b->samples[i];
		const struct rep_stack *st;
		PSample *s;
		PLabel *lb;
		uint32_t pid = rs->process < b->n_processes ?
				       b->processes[rs->process].pid : 0;

		if (rs->stack >= b->n_stacks || !rs->count)
			continue;
		st = &b->stacks[rs->stack];
		s = arena_calloc(&pp->arena, 1, sizeof(*s));
		lb = arena_calloc(&pp->arena, 4, sizeof(*lb));
		if (!s || !lb)
			return -ENOMEM;
		perftools__profiles__sample__init(s);
		s->location_id = arena_calloc(&pp->arena, st->n + 1,
						  sizeof(*s->location_id));
		s->value = arena_calloc(&pp->arena, 3, sizeof(*s->value));
		s->label = arena_calloc(&pp->arena, 4, sizeof(*s->label));
		if (!s->location_id || !s->value || !s->label)
			return -ENOMEM;
		for (j = 0; j < st->n; j++)
			if (st->locations[j] < b->n_locations &&
			    !rep_inl_member(b->locations, st->locations[j]))
				s->location_id[s->n_location_id++] =
					pp->loc_id[st->locations[j]];
		s->n_value = pp->offcpu ? 3 : 2;
		if (rs->kind == REP_SAMPLE_OFFCPU) {
			if (!pp->offcpu)
				continue;
			s->value[2] = (int64_t)rs->value;
		} else {
			s->value[0] = (int64_t)rs->count;
			s->value[1] = (int64_t)(rs->count * b->period_ns);
		}
		s->label[s->n_label++] = label(pp, &lb[0], "thread.name",
					       rep_thread_label(b, rs), 0);
		s->label[s->n_label++] = label(pp, &lb[1], "process.pid", NULL, pid);
		s->label[s->n_label++] = label(pp, &lb[2], "thread.id", NULL, rs->tid);
		if (rs->cpu >= 0)
			s->label[s->n_label++] = label(pp, &lb[3], "cpu.logical_number",
						       NULL, rs->cpu);
		p->sample[p->n_sample++] = s;
	}
	return 0;
}

int rep_encode_pprof(const struct rep_batch *b, void **buf, size_t *len)
{
	struct pp pp = { .b = b };
	PProfile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	PValueType *types[3];
	uint8_t *raw = NULL;
	size_t n;
	int err;

	err = rep_strtab_init(&pp.strs);
	if (err)
		goto cleanup;
	err = mark_used(&pp);
	if (err)
		goto cleanup;
	types[0] = value_type(&pp, "samples", "count");
	types[1] = value_type(&pp, "cpu", "nanoseconds");
	p.period_type = value_type(&pp, "cpu", "nanoseconds");
	if (!types[0] || !types[1] || !p.period_type) {
		err = -ENOMEM;
		goto cleanup;
	}
	p.n_sample_type = 2;
	pp.offcpu = rep_batch_has(b, REP_SAMPLE_OFFCPU);
	if (pp.offcpu) {
		types[2] = value_type(&pp, "off_cpu", "nanoseconds");
		if (!types[2]) {
			err = -ENOMEM;
			goto cleanup;
		}
		p.n_sample_type = 3;
		/* pprof shows the last type unless told */
		p.default_sample_type = str(&pp, "cpu");
	}
	p.sample_type = types;
	p.period = (int64_t)b->period_ns;
	p.time_nanos = (int64_t)b->start_ns;
	p.duration_nanos = b->end_ns > b->start_ns ? (int64_t)(b->end_ns - b->start_ns) : 0;
	err = build_mappings(&pp, &p);
	if (!err)
		err = build_locations(&pp, &p);
	if (!err)
		err = build_samples(&pp, &p);
	if (!err)
		err = pp.strs.err;
	if (err)
		goto cleanup;
	p.string_table = rep_strtab_strings(&pp.strs, &p.n_string_table);
	n = perftools__profiles__profile__get_packed_size(&p);
	raw = malloc(n + 1);
	if (!raw) {
		err = -ENOMEM;
		goto cleanup;
	}
	perftools__profiles__profile__pack(&p, raw);
	err = rep_gzip(raw, n, 0, buf, len);
cleanup:
	free(raw);
	free(pp.loc_id);
	free(pp.map_id);
	intern_free(&pp.funcs);
	rep_strtab_free(&pp.strs);
	arena_free(&pp.arena);
	return err;
}
