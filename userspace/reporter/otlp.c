// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP profiles v1development, v1.10 wire layout: one
 * ExportProfilesServiceRequest per batch with one shared dictionary and one
 * ResourceProfiles per process, as the reference agent sends since 2026-03.
 *
 * Dictionary: every table starts with its zero element; entries are
 * deduplicated by their full content (an interner keyed by the entry's
 * encoded fields), so a library mapped by many processes is one Mapping and
 * its hot locations one Location each: mappings and locations are in ELF
 * address space (start - bias), not process addresses.  Every Location has
 * profile.frame.type; every Mapping has process.executable.build_id.htlhash
 * and, when known, .gnu.  Resource attributes are plain KeyValue strings
 * (receivers' OTLP paths do not resolve *_strindex); sample attributes live
 * in the attribute table with string_value (not strindex) values, because
 * devfiler reads only string_value.
 *
 * Shapes: a process's samples are timestamps-only (value 1 per event, what
 * the reference agent sends) when each has a timestamp per event, and
 * values-only otherwise, never mixed within one Profile.
 *
 * Off-CPU samples are a second Profile in the process's scope, as the
 * reference agent sends them: sample type off_cpu/nanoseconds, no period,
 * each sample's value the nanoseconds its stack spent off the CPU.
 */
#include "rep_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfaddr.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest ORequest;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary ODict;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles OResProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles OScopeProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile OProfile;
typedef Opentelemetry__Proto__Profiles__V1development__Link OLink;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType OValueType;
typedef Opentelemetry__Proto__Profiles__V1development__Sample OSample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping OMapping;
typedef Opentelemetry__Proto__Profiles__V1development__Stack OStack;
typedef Opentelemetry__Proto__Profiles__V1development__Location OLocation;
typedef Opentelemetry__Proto__Profiles__V1development__Line OLine;
typedef Opentelemetry__Proto__Profiles__V1development__Function OFunction;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit OKeyValueAndUnit;
typedef Opentelemetry__Proto__Common__V1__AnyValue OAnyValue;
typedef Opentelemetry__Proto__Common__V1__KeyValue OKeyValue;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope OScope;
typedef Opentelemetry__Proto__Resource__V1__Resource OResource;

/* The dictionary's table (its member table and n_table) of n messages
 * of the profiles' type, in the arena. */
#define OT_TABLE(o, d, table, n, type)                                         \
	REP_MSG_TABLE(&(o)->arena, (d)->table, (d)->n_##table, n,              \
		      opentelemetry__proto__profiles__v1development__##type##__init)

#define SCOPE_NAME "ebpf-profiler"
#ifndef EP_VERSION
#define EP_VERSION "0.0.0"
#endif

/* Dictionary keys: the fields of an entry, as the map hashes them. */
struct attr_key {
	int32_t key;   /* strindex */
	int32_t is_int;
	int64_t num;   /* is_int; otherwise the string follows the struct */
};

struct otlp_mapping_key {
	uint64_t start, limit, offset;
	int32_t filename;
	int32_t attrs[2]; /* htlhash, gnu (0: none) */
	int32_t pad;
};

struct function_key {
	int32_t name, filename;
};

struct location_key {
	uint64_t address;
	int64_t line;
	int32_t mapping, function; /* function 0: no Line */
	int32_t frame_type;	   /* attribute index */
	/* an inline chain's first location: its batch index + 1, so the
	 * Location carries the chain's Lines (rep_location.inl_more); 0
	 * otherwise */
	int32_t chain;
};

/* A sample identity in the request: process, kind, stack, attribute set. */
struct sample_key {
	uint32_t process;
	uint32_t kind; /* enum rep_sample_kind */
	int32_t stack;
	int32_t attrs[3]; /* thread.name, thread.id, cpu.logical_number or 0 */
};

struct ot {
	const struct rep_batch *b;
	struct arena arena;
	struct rep_strtab strs;
	struct intern attrs, maps, funcs, locs, stacks, samples;
	int32_t *loc_index;   /* batch location -> location_table index, 0 = not yet */
	int32_t *map_index;   /* batch mapping -> mapping_table index, 0 = not yet */
	int32_t frame_type[FRAME_KIND_COUNT]; /* attribute index, 0 = not yet */
	int32_t *stack_buf;
	/* Per request sample (the samples map's ids). */
	uint32_t *first, *last; /* chain of batch samples through next[] */
	uint32_t *next;
	bool *ts_shape;	/* by process: timestamps-only */
	uint32_t *proc_start; /* by process: its first entry in by_proc */
	uint32_t *by_proc;    /* request sample ids grouped by process */
	int err;
};

static int32_t intern(struct ot *o, struct intern *m, const void *key,
		      size_t len)
{
	int64_t id;

	if (o->err)
		return 0;
	id = intern_add(m, key, len, NULL);
	if (id < 0) {
		o->err = (int)id;
		return 0;
	}
	return (int32_t)id;
}

static int32_t str(struct ot *o, const char *s)
{
	return rep_strtab_add(&o->strs, s);
}

static int32_t attr_str(struct ot *o, const char *key, const char *val)
{
	size_t n = strlen(val);
	struct attr_key *k = malloc(sizeof(*k) + n);
	int32_t id;

	if (!k) {
		o->err = -ENOMEM;
		return 0;
	}
	*k = (struct attr_key){ .key = str(o, key) };
	memcpy(k + 1, val, n);
	id = intern(o, &o->attrs, k, sizeof(*k) + n);
	free(k);
	return id;
}

static int32_t attr_int(struct ot *o, const char *key, int64_t val)
{
	struct attr_key k = { .key = str(o, key), .is_int = 1, .num = val };

	return intern(o, &o->attrs, &k, sizeof(k));
}

static int32_t mapping_index(struct ot *o, uint32_t m)
{
	const struct rep_mapping *rm;
	struct otlp_mapping_key k = { 0 };
	char hex[33];

	if (m >= o->b->n_mappings)
		return 0;
	if (o->map_index[m])
		return o->map_index[m];
	rm = &o->b->mappings[m];
	k.start = ea_elf_addr(rm->bias, rm->start);
	k.limit = ea_elf_addr(rm->bias, rm->limit);
	k.offset = rm->file_offset;
	k.filename = str(o, rep_basename(rm->path));
	rep_hex(rm->file_id, sizeof(rm->file_id), hex);
	k.attrs[0] = attr_str(o, "process.executable.build_id.htlhash", hex);
	if (rm->gnu_build_id && *rm->gnu_build_id)
		k.attrs[1] = attr_str(o, "process.executable.build_id.gnu",
				      rm->gnu_build_id);
	return o->map_index[m] = intern(o, &o->maps, &k, sizeof(k));
}

static int32_t location_index(struct ot *o, uint32_t l)
{
	const struct rep_location *rl = &o->b->locations[l];
	struct location_key k = { 0 };
	unsigned kind;

	if (o->loc_index[l])
		return o->loc_index[l];
	k.address = rl->address;
	k.line = rl->line;
	k.mapping = mapping_index(o, rl->mapping);
	kind = rl->kind < FRAME_KIND_COUNT ? rl->kind : FRAME_NATIVE;
	if (!o->frame_type[kind])
		o->frame_type[kind] = attr_str(o, "profile.frame.type",
					       rep_frame_kind_name(kind));
	k.frame_type = o->frame_type[kind];
	if (rl->function && *rl->function) {
		struct function_key f = { str(o, rl->function),
					  str(o, rl->filename) };

		k.function = intern(o, &o->funcs, &f, sizeof(f));
	}
	if (rl->inl_more && k.function) {
		uint32_t m, n;

		k.chain = (int32_t)l + 1;
		/* the chain's functions in the table now, found again when
		 * the Location is written */
		n = rep_inl_chain_len(o->b->locations, o->b->n_locations, l);
		for (m = l + 1; m < l + n; m++) {
			const struct rep_location *ml = &o->b->locations[m];
			struct function_key f = { str(o, ml->function),
						  str(o, ml->filename) };

			intern(o, &o->funcs, &f, sizeof(f));
		}
	}
	return o->loc_index[l] = intern(o, &o->locs, &k, sizeof(k));
}

static int32_t stack_index(struct ot *o, uint32_t s)
{
	const struct rep_stack *st = &o->b->stacks[s];
	uint32_t i, n = 0;

	for (i = 0; i < st->n; i++)
		if (st->locations[i] < o->b->n_locations &&
		    !rep_inl_member(o->b->locations, st->locations[i]))
			o->stack_buf[n++] = location_index(o, st->locations[i]);
	return intern(o, &o->stacks, o->stack_buf, n * sizeof(*o->stack_buf));
}

/* A counting sort of the request's samples by process, first-seen order
 * within each. */
static int group_by_process(struct ot *o)
{
	uint32_t np = o->b->n_processes, i, *fill;

	o->proc_start = calloc(np + 2, sizeof(*o->proc_start));
	o->by_proc = calloc(o->samples.n + 1, sizeof(*o->by_proc));
	fill = calloc(np + 1, sizeof(*fill));
	if (!o->proc_start || !o->by_proc || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < o->samples.n; i++) {
		const struct sample_key *k = intern_key(&o->samples, i, NULL);

		o->proc_start[k->process + 1]++;
	}
	for (i = 0; i < np; i++)
		o->proc_start[i + 1] += o->proc_start[i];
	for (i = 0; i < o->samples.n; i++) {
		const struct sample_key *k = intern_key(&o->samples, i, NULL);

		o->by_proc[o->proc_start[k->process] + fill[k->process]++] = i;
	}
	free(fill);
	return 0;
}

/* Intern every sample: the dictionary fills as a side effect. */
static int collect(struct ot *o)
{
	const struct rep_batch *b = o->b;
	uint32_t i, maxn = 0;
	bool added;

	for (i = 0; i < b->n_stacks; i++)
		if (b->stacks[i].n > maxn)
			maxn = b->stacks[i].n;
	o->stack_buf = calloc(maxn + 1, sizeof(*o->stack_buf));
	o->loc_index = calloc(b->n_locations + 1, sizeof(*o->loc_index));
	o->map_index = calloc(b->n_mappings + 1, sizeof(*o->map_index));
	o->next = calloc(b->n_samples + 1, sizeof(*o->next));
	/* a request sample per batch sample at most */
	o->first = calloc(b->n_samples + 1, sizeof(*o->first));
	o->last = calloc(b->n_samples + 1, sizeof(*o->last));
	o->ts_shape = calloc(b->n_processes + 1, sizeof(*o->ts_shape));
	if (!o->stack_buf || !o->loc_index || !o->map_index || !o->next ||
	    !o->first || !o->last || !o->ts_shape)
		return -ENOMEM;
	for (i = 0; i < b->n_processes; i++)
		o->ts_shape[i] = true;
	for (i = 0; i < b->n_samples; i++) {
		const struct rep_sample *s = &b->samples[i];
		struct sample_key k = { .process = s->process, .kind = s->kind };
		int64_t id;

		if (s->process >= b->n_processes || s->stack >= b->n_stacks ||
		    !s->count)
			continue;
		if (s->kind == REP_SAMPLE_CPU && s->n_timestamps != s->count)
			o->ts_shape[s->process] = false;
		k.stack = stack_index(o, s->stack);
		k.attrs[0] = attr_str(o, "thread.name", rep_thread_label(b, s));
		k.attrs[1] = attr_int(o, "thread.id", s->tid);
		if (s->cpu >= 0)
			k.attrs[2] = attr_int(o, "cpu.logical_number", s->cpu);
		if (o->err)
			return o->err;
		id = intern_add(&o->samples, &k, sizeof(k), &added);
		if (id < 0)
			return -ENOMEM;
		o->next[i] = UINT32_MAX;
		if (added)
			o->first[id] = i;
		else
			o->next[o->last[id]] = i;
		o->last[id] = i;
	}
	return o->err ? o->err : group_by_process(o);
}

/* ---- building the messages from the maps' keys --------------------- */

#define ARENA_ARRAY(o, ptr, n)                                                 \
	((ptr) = arena_calloc(&(o)->arena, (n) + 1, sizeof(*(ptr))))

static OAnyValue *any_value(struct ot *o, const struct attr_key *k)
{
	OAnyValue *v = arena_calloc(&o->arena, 1, sizeof(*v));
	char *s;

	if (!v)
		return NULL;
	opentelemetry__proto__common__v1__any_value__init(v);
	if (k->is_int) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = k->num;
		return v;
	}
	/* The map keeps a NUL after every key. */
	s = (char *)(k + 1);
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = s;
	return v;
}

static int build_attributes(struct ot *o, ODict *d)
{
	size_t i;

	if (!OT_TABLE(o, d, attribute_table, o->attrs.n, key_value_and_unit))
		return -ENOMEM;
	for (i = 1; i < o->attrs.n; i++) { /* the zero element stays empty */
		const struct attr_key *k = intern_key(&o->attrs, i, NULL);
		OKeyValueAndUnit *a = d->attribute_table[i];

		a->key_strindex = k->key;
		a->value = any_value(o, k);
		if (!a->value)
			return -ENOMEM;
	}
	return 0;
}

static int32_t *copy_indices(struct ot *o, const int32_t *src, size_t n,
			     size_t *out_n)
{
	int32_t *dst = arena_calloc(&o->arena, n + 1, sizeof(*dst));
	size_t i;

	*out_n = 0;
	if (dst)
		for (i = 0; i < n; i++)
			if (src[i])
				dst[(*out_n)++] = src[i];
	return dst;
}

static int build_mappings(struct ot *o, ODict *d)
{
	size_t i;

	if (!OT_TABLE(o, d, mapping_table, o->maps.n, mapping))
		return -ENOMEM;
	for (i = 0; i < o->maps.n; i++) {
		const struct otlp_mapping_key *k = intern_key(&o->maps, i, NULL);
		OMapping *m = d->mapping_table[i];

		m->memory_start = k->start;
		m->memory_limit = k->limit;
		m->file_offset = k->offset;
		m->filename_strindex = k->filename;
		m->attribute_indices = copy_indices(o, k->attrs, 2,
						    &m->n_attribute_indices);
		if (!m->attribute_indices)
			return -ENOMEM;
	}
	return 0;
}

static int build_functions(struct ot *o, ODict *d)
{
	size_t i;

	if (!OT_TABLE(o, d, function_table, o->funcs.n, function))
		return -ENOMEM;
	for (i = 0; i < o->funcs.n; i++) {
		const struct function_key *k = intern_key(&o->funcs, i, NULL);

		d->function_table[i]->name_strindex = k->name;
		d->function_table[i]->filename_strindex = k->filename;
	}
	return 0;
}

/* The Lines of an inline chain's Location: first (the innermost
 * function, already filled), then the functions it was inlined into, in
 * the batch's locations after first (rep_location.inl_more). */
static int chain_lines(struct ot *o, uint32_t first, OLine *head, OLocation *l)
{
	uint32_t n = rep_inl_chain_len(o->b->locations, o->b->n_locations,
				       first), m;

	if (!ARENA_ARRAY(o, l->lines, n))
		return -ENOMEM;
	l->lines[l->n_lines++] = head;
	for (m = first + 1; m < first + n; m++) {
		const struct rep_location *ml = &o->b->locations[m];
		struct function_key f = { str(o, ml->function),
					  str(o, ml->filename) };
		OLine *ln = arena_calloc(&o->arena, 1, sizeof(*ln));

		if (!ln)
			return -ENOMEM;
		opentelemetry__proto__profiles__v1development__line__init(ln);
		ln->function_index = intern(o, &o->funcs, &f, sizeof(f));
		ln->line = ml->line;
		l->lines[l->n_lines++] = ln;
	}
	return 0;
}

static int build_locations(struct ot *o, ODict *d)
{
	OLine *ln;
	size_t i;
	int err = 0;

	if (!OT_TABLE(o, d, location_table, o->locs.n, location) ||
	    !ARENA_ARRAY(o, ln, o->locs.n))
		return -ENOMEM;
	for (i = 1; i < o->locs.n; i++) { /* the zero element stays empty */
		const struct location_key *k = intern_key(&o->locs, i, NULL);
		OLocation *l = d->location_table[i];

		l->mapping_index = k->mapping;
		l->address = k->address;
		l->attribute_indices = copy_indices(o, &k->frame_type, 1,
						    &l->n_attribute_indices);
		if (!l->attribute_indices)
			return -ENOMEM;
		if (!k->function)
			continue;
		opentelemetry__proto__profiles__v1development__line__init(&ln[i]);
		ln[i].function_index = k->function;
		ln[i].line = k->line;
		if (k->chain)
			err = chain_lines(o, (uint32_t)k->chain - 1, &ln[i], l);
		else if (ARENA_ARRAY(o, l->lines, 1))
			l->lines[l->n_lines++] = &ln[i];
		else
			err = -ENOMEM;
		if (err)
			return err;
	}
	return 0;
}

static int build_stacks(struct ot *o, ODict *d)
{
	size_t i;

	if (!OT_TABLE(o, d, stack_table, o->stacks.n, stack))
		return -ENOMEM;
	for (i = 0; i < o->stacks.n; i++) {
		OStack *s = d->stack_table[i];
		size_t len;

		/* Keys are the index arrays themselves; the zero stack is empty. */
		s->location_indices = (int32_t *)intern_key(&o->stacks, i, &len);
		s->n_location_indices = len / sizeof(int32_t);
	}
	return 0;
}

static int build_dictionary(struct ot *o, ODict *d)
{
	static uint8_t zero_trace[16], zero_span[8];
	OLink *link;
	int err;

	err = build_attributes(o, d);
	if (!err)
		err = build_mappings(o, d);
	if (!err)
		err = build_functions(o, d);
	if (!err)
		err = build_locations(o, d);
	if (!err)
		err = build_stacks(o, d);
	if (err)
		return err;
	/* link_table[0]: the recommended all-zero ids. */
	link = arena_calloc(&o->arena, 1, sizeof(*link));
	if (!link || !ARENA_ARRAY(o, d->link_table, 1))
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__link__init(link);
	link->trace_id = (ProtobufCBinaryData){ sizeof(zero_trace), zero_trace };
	link->span_id = (ProtobufCBinaryData){ sizeof(zero_span), zero_span };
	d->link_table[0] = link;
	d->n_link_table = 1;
	return 0;
}

static OKeyValue *kv(struct ot *o, const char *key, const char *s, int64_t num)
{
	OKeyValue *k = arena_calloc(&o->arena, 1, sizeof(*k));
	OAnyValue *v = arena_calloc(&o->arena, 1, sizeof(*v));

	if (!k || !v)
		return NULL;
	opentelemetry__proto__common__v1__key_value__init(k);
	opentelemetry__proto__common__v1__any_value__init(v);
	k->key = (char *)key;
	k->value = v;
	if (s) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = (char *)s;
	} else {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = num;
	}
	return k;
}

static OResource *resource(struct ot *o, const struct rep_process *p)
{
	const struct rep_batch *b = o->b;
	OResource *r = arena_calloc(&o->arena, 1, sizeof(*r));
	struct {
		const char *key, *s;
	} strs[] = {
		{ "process.executable.path", p->exe_path },
		{ "process.executable.name",
		  p->exe_name ? p->exe_name : p->exe_path ? rep_basename(p->exe_path) : NULL },
		{ "container.id", p->container_id },
		{ "host.name", b->host_name },
		{ "os.type", b->os_type },
		{ "os.version", b->kernel_release },
	};
	size_t i;

	if (!r)
		return NULL;
	opentelemetry__proto__resource__v1__resource__init(r);
	if (!ARENA_ARRAY(o, r->attributes, 1 + sizeof(strs) / sizeof(strs[0])))
		return NULL;
	if (!(r->attributes[r->n_attributes++] = kv(o, "process.pid", NULL, p->pid)))
		return NULL;
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		if (!strs[i].s || !*strs[i].s)
			continue;
		if (!(r->attributes[r->n_attributes++] = kv(o, strs[i].key, strs[i].s, 0)))
			return NULL;
	}
	return r;
}

static OValueType *value_type(struct ot *o, const char *type, const char *unit)
{
	OValueType *v = arena_calloc(&o->arena, 1, sizeof(*v));

	if (v) {
		opentelemetry__proto__profiles__v1development__value_type__init(v);
		v->type_strindex = str(o, type);
		v->unit_strindex = str(o, unit);
	}
	return v;
}

/* Fill one request sample from its chain of batch samples. */
static int fill_sample(struct ot *o, uint32_t id, bool ts_shape, OSample *s,
		       uint64_t *tmin, uint64_t *tmax)
{
	const struct rep_batch *b = o->b;
	const struct sample_key *k = intern_key(&o->samples, id, NULL);
	uint64_t count = 0, nts = 0, value = 0;
	uint32_t i, j;

	opentelemetry__proto__profiles__v1development__sample__init(s);
	s->stack_index = k->stack;
	s->attribute_indices = copy_indices(o, k->attrs, 3, &s->n_attribute_indices);
	if (!s->attribute_indices)
		return -ENOMEM;
	for (i = o->first[id]; i != UINT32_MAX; i = o->next[i]) {
		count += b->samples[i].count;
		value += b->samples[i].value;
		nts += b->samples[i].n_timestamps;
	}
	if (k->kind == REP_SAMPLE_OFFCPU) {
		if (!ARENA_ARRAY(o, s->values, 1))
			return -ENOMEM;
		s->values[0] = (int64_t)value;
		s->n_values = 1;
		return 0;
	}
	if (!ts_shape) {
		if (!ARENA_ARRAY(o, s->values, 1))
			return -ENOMEM;
		s->values[0] = (int64_t)count;
		s->n_values = 1;
		return 0;
	}
	if (!ARENA_ARRAY(o, s->timestamps_unix_nano, nts))
		return -ENOMEM;
	for (i = o->first[id]; i != UINT32_MAX; i = o->next[i]) {
		for (j = 0; j < b->samples[i].n_timestamps; j++) {
			uint64_t t = b->samples[i].timestamps[j];

			s->timestamps_unix_nano[s->n_timestamps_unix_nano++] = t;
			if (t < *tmin)
				*tmin = t;
			if (t > *tmax)
				*tmax = t;
		}
	}
	return 0;
}

/* The value types of a Profile of each sample kind. */
struct otlp_types {
	OValueType *stype[2], *ptype[2];
};

/* The process's samples of one kind as a Profile in sp; none (and no
 * Profile) when it has no such samples. */
static int add_profile(struct ot *o, uint32_t proc, unsigned kind,
		       OScopeProfiles *sp, const struct otlp_types *ty)
{
	const struct rep_batch *b = o->b;
	uint32_t n = o->proc_start[proc + 1] - o->proc_start[proc], i, m = 0;
	uint64_t tmin = b->start_ns, tmax = 0, end;
	OProfile *p;
	OSample *ss;

	for (i = 0; i < n; i++) {
		const struct sample_key *k = intern_key(
			&o->samples, o->by_proc[o->proc_start[proc] + i], NULL);

		m += k->kind == kind;
	}
	if (!m)
		return 0;
	p = arena_calloc(&o->arena, 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__profile__init(p);
	if (!ARENA_ARRAY(o, p->samples, m) || !ARENA_ARRAY(o, ss, m))
		return -ENOMEM;
	sp->profiles[sp->n_profiles++] = p;
	p->sample_type = ty->stype[kind];
	p->period_type = ty->ptype[kind];
	if (kind == REP_SAMPLE_CPU)
		p->period = (int64_t)b->period_ns;
	m = 0;
	for (i = 0; i < n; i++) {
		uint32_t id = o->by_proc[o->proc_start[proc] + i];
		const struct sample_key *k = intern_key(&o->samples, id, NULL);

		if (k->kind != kind)
			continue;
		if (fill_sample(o, id, o->ts_shape[proc], &ss[m], &tmin, &tmax))
			return -ENOMEM;
		p->samples[p->n_samples++] = &ss[m++];
	}
	/* Timestamps SHOULD lie in [time, time + duration). */
	end = b->end_ns > tmax ? b->end_ns : tmax + 1;
	p->time_unix_nano = tmin;
	p->duration_nano = end > tmin ? end - tmin : 0;
	return 0;
}

static OResProfiles *resource_profiles(struct ot *o, uint32_t proc, OScope *scope,
				       const struct otlp_types *ty)
{
	const struct rep_batch *b = o->b;
	OResProfiles *rp = arena_calloc(&o->arena, 1, sizeof(*rp));
	OScopeProfiles *sp = arena_calloc(&o->arena, 1, sizeof(*sp));
	uint32_t n = o->proc_start[proc + 1] - o->proc_start[proc];

	if (!rp || !sp)
		return NULL;
	if (!n)
		return rp; /* no Profile: the caller skips it */
	opentelemetry__proto__profiles__v1development__resource_profiles__init(rp);
	opentelemetry__proto__profiles__v1development__scope_profiles__init(sp);
	if (!(rp->resource = resource(o, &b->processes[proc])) ||
	    !ARENA_ARRAY(o, rp->scope_profiles, 1) || !ARENA_ARRAY(o, sp->profiles, 2))
		return NULL;
	rp->scope_profiles[rp->n_scope_profiles++] = sp;
	sp->scope = scope;
	if (add_profile(o, proc, REP_SAMPLE_CPU, sp, ty) ||
	    add_profile(o, proc, REP_SAMPLE_OFFCPU, sp, ty))
		return NULL;
	return rp;
}

int rep_encode_otlp(const struct rep_batch *b, void **buf, size_t *len)
{
	ORequest req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	ODict dict = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	OScope scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	struct ot o = { .b = b };
	struct otlp_types ty = { 0 };
	uint8_t *out = NULL;
	uint32_t i;
	size_t n;
	int err;

	err = rep_strtab_init(&o.strs);
	if (err)
		goto cleanup;
	/* The zero element of every table comes first. */
	{
		struct attr_key a = { 0 };
		struct otlp_mapping_key m = { 0 };
		struct function_key f = { 0 };
		struct location_key l = { 0 };

		intern(&o, &o.attrs, &a, sizeof(a));
		intern(&o, &o.maps, &m, sizeof(m));
		intern(&o, &o.funcs, &f, sizeof(f));
		intern(&o, &o.locs, &l, sizeof(l));
		intern(&o, &o.stacks, "", 0);
	}
	ty.stype[REP_SAMPLE_CPU] = value_type(&o, "samples", "count");
	ty.ptype[REP_SAMPLE_CPU] = value_type(&o, "cpu", "nanoseconds");
	/* off-CPU: no period (the reference agent sends none) */
	if (rep_batch_has(b, REP_SAMPLE_OFFCPU))
		ty.stype[REP_SAMPLE_OFFCPU] =
			value_type(&o, "off_cpu", "nanoseconds");
	err = o.err;
	if (!err && (!ty.stype[0] || !ty.ptype[0]))
		err = -ENOMEM;
	if (!err)
		err = collect(&o);
	if (err)
		goto cleanup;
	scope.name = SCOPE_NAME;
	scope.version = EP_VERSION;
	if (!ARENA_ARRAY(&o, req.resource_profiles, b->n_processes))
		goto nomem;
	for (i = 0; i < b->n_processes; i++) {
		OResProfiles *rp = resource_profiles(&o, i, &scope, &ty);

		if (!rp)
			goto nomem;
		if (rp->n_scope_profiles)
			req.resource_profiles[req.n_resource_profiles++] = rp;
	}
	err = build_dictionary(&o, &dict);
	if (!err)
		err = o.err ? o.err : o.strs.err;
	if (err)
		goto cleanup;
	dict.string_table = rep_strtab_strings(&o.strs, &dict.n_string_table);
	req.dictionary = &dict;
	n = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(&req);
	out = malloc(n + 1);
	if (!out)
		goto nomem;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(&req, out);
	*buf = out;
	*len = n;
	goto cleanup;
nomem:
	err = -ENOMEM;
cleanup:
	free(o.stack_buf);
	free(o.loc_index);
	free(o.map_index);
	free(o.next);
	free(o.ts_shape);
	free(o.first);
	free(o.last);
	free(o.proc_start);
	free(o.by_proc);
	intern_free(&o.attrs);
	intern_free(&o.maps);
	intern_free(&o.funcs);
	intern_free(&o.locs);
	intern_free(&o.stacks);
	intern_free(&o.samples);
	rep_strtab_free(&o.strs);
	arena_free(&o.arena);
	return err;
}
