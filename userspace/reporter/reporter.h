/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reporter: one narrow interface between the trace pipeline and the
 * encoders.  The pipeline aggregates samples over an interval and hands the
 * result to every open sink as one rep_batch; a sink encodes it (folded,
 * pprof, SVG, OTLP) and writes or queues it.  Sinks never see BPF, /proc or
 * the store.
 *
 * All strings and arrays in a batch belong to the caller and stay valid
 * only during rep_sink_write(); a sink that sends later copies what it
 * needs (the OTLP sink encodes at once and queues the bytes).
 */
#ifndef EP_REPORTER_H
#define EP_REPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REP_NONE UINT32_MAX

enum rep_frame_kind {
	REP_FRAME_NATIVE = 0,
	REP_FRAME_KERNEL,
	REP_FRAME_PYTHON,
	REP_FRAME_GO,
	REP_FRAME_ERROR, /* an unwinding error, named by function */
	REP_FRAME_KIND_COUNT,
};

/* "native", "kernel", "cpython", ...: the OTLP profile.frame.type value. */
const char *rep_frame_kind_name(enum rep_frame_kind k);

struct rep_mapping {
	uint64_t start, limit, file_offset; /* runtime addresses */
	const char *path;		    /* as in /proc/PID/maps */
	uint8_t file_id[16];		    /* the htlhash */
	const char *gnu_build_id;	    /* hex, or NULL */
};

struct rep_location {
	enum rep_frame_kind kind;
	uint32_t mapping;     /* index into batch->mappings, or REP_NONE */
	uint64_t address;     /* native: ELF address; kernel: kernel address */
	const char *function; /* symbol or qualified name, or NULL */
	const char *filename; /* source file, or NULL */
	uint32_t line;	      /* 0 when unknown */
};

struct rep_stack {
	uint32_t n;
	const uint32_t *locations; /* indices into batch->locations, leaf first */
};

struct rep_process {
	uint32_t pid;
	const char *exe_path; /* may be NULL */
	const char *exe_name; /* may be NULL */
	const char *container_id; /* NULL when not in a container */
};

struct rep_sample {
	uint32_t process; /* index into batch->processes */
	uint32_t stack;	  /* index into batch->stacks */
	uint32_t tid;
	const char *thread_name; /* comm */
	int32_t cpu;		 /* -1 when mixed */
	uint64_t count;
	uint32_t n_timestamps; /* may be fewer than count (bounded) */
	const uint64_t *timestamps; /* unix ns */
};

struct rep_batch {
	uint64_t start_ns, end_ns; /* unix ns, the collection window */
	uint64_t period_ns;	   /* 1e9 / samples per second */
	const char *host_name;
	const char *os_type;	    /* "linux" */
	const char *kernel_release; /* uname -r */
	uint32_t n_mappings, n_locations, n_stacks, n_processes, n_samples;
	const struct rep_mapping *mappings;
	const struct rep_location *locations;
	const struct rep_stack *stacks;
	const struct rep_process *processes;
	const struct rep_sample *samples;
};

/* Counters every sink keeps; rep_sink_stats() copies them out. */
struct rep_stats {
	uint64_t batches;	/* batches written or sent */
	uint64_t samples;	/* samples written or sent */
	uint64_t bytes;		/* encoded bytes */
	uint64_t send_ok;	/* OTLP requests accepted */
	uint64_t send_fail;	/* OTLP attempts that failed (retried) */
	uint64_t queue_drops;	/* batches dropped: queue full */
	uint64_t queue_len;	/* batches waiting now */
	uint64_t write_errors;	/* file writes that failed */
};

/* Options for the OTLP sink; the environment (OTEL_EXPORTER_OTLP_*) fills
 * what the flags did not set, see rep_otlp_opts_from_env(). */
struct rep_otlp_opts {
	const char *endpoint;  /* "host:port" or a URL */
	const char *protocol;  /* "grpc" or "http/protobuf" */
	bool insecure;	       /* no TLS */
	const char *headers;   /* "k=v,k2=v2" */
	unsigned timeout_ms;
	const char *compression; /* "gzip" or "none" */
	unsigned queue_max;	 /* batches kept while the receiver is down */
	size_t queue_max_bytes;
};

struct rep_sink;

/* Fill the fields opts left unset from OTEL_EXPORTER_OTLP_* variables.
 * Returns 0 or -EINVAL for a malformed value. */
int rep_otlp_opts_from_env(struct rep_otlp_opts *o);

/*
 * Open a file sink; the format comes from the extension: ".folded",
 * ".pb.gz"/".pprof" (gzip'd pprof), ".svg", ".otlp" (an OTLP request body).
 * With rotate set, each write goes to PATH with the interval's start time
 * inserted before the extension; otherwise each write replaces the file
 * (the last batch, which is the whole run when the pipeline accumulates).
 * Returns 0 or -EINVAL (unknown extension).
 */
int rep_file_sink_open(const char *path, bool rotate, struct rep_sink **out);
/* Open an OTLP sink with a sender thread; never blocks the caller. */
int rep_otlp_sink_open(const struct rep_otlp_opts *opts, struct rep_sink **out);
/* Encode and write (file) or queue (OTLP) one batch.  Returns 0 or a
 * negative errno (the sink counts the failure). */
int rep_sink_write(struct rep_sink *s, const struct rep_batch *b);
void rep_sink_stats(struct rep_sink *s, struct rep_stats *out);
/* Flush (OTLP: try to send what is queued for up to timeout_ms), stop,
 * free.  NULL is fine. */
void rep_sink_close(struct rep_sink *s, unsigned timeout_ms);

/* Format-level encoders, for tests and for the file sink.  Each returns a
 * malloc'd buffer in *buf (caller frees) and 0, or a negative errno. */
int rep_encode_folded(const struct rep_batch *b, char **buf, size_t *len);
int rep_encode_pprof(const struct rep_batch *b, void **buf, size_t *len); /* gzip'd */
int rep_encode_otlp(const struct rep_batch *b, void **buf, size_t *len);  /* raw protobuf */
int rep_encode_svg(const struct rep_batch *b, const char *title, char **buf,
		   size_t *len);

/* The display name of a location, as folded and SVG print it: function,
 * "name_[k]" for kernel frames, "qualname (file.py:line)" for Python,
 * "basename+0xOFFSET" when there is no symbol.  Writes at most n bytes. */
void rep_location_name(const struct rep_batch *b, const struct rep_location *l,
		       char *buf, size_t n);

#endif
