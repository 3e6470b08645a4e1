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
 *
 * Every string in a batch must be valid UTF-8: protobuf decoders (protoc,
 * upb, Go) reject a request whose `string` fields are not, and the folded
 * and SVG readers want text.  The encoders pass strings through as they
 * are; the producer makes them valid once, with rep_utf8_fix(), where a
 * string from outside (comm, /proc, ELF, process memory) enters the batch.
 */
#ifndef EP_REPORTER_H
#define EP_REPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "profiler.h"

#define REP_NONE UINT32_MAX

/* A location's kind is enum frame_kind (profiler.h), the number BPF and
 * the pipeline use: FRAME_NATIVE, FRAME_KERNEL, FRAME_ERROR (an
 * unwinding error, named by function) and FRAME_INTERP(runtime). */

/* "native", "kernel", an interpreter's type: the OTLP profile.frame.type value
 * (an interpreter's from INTERPRETERS). */
const char *rep_frame_kind_name(unsigned kind);

/*
 * One mapping of a file into one process (runtime addresses differ between
 * processes; the pipeline shares an entry only where they are identical).
 * bias is the load bias: runtime address = ELF address + bias (0 for
 * non-PIE executables).  pprof gets runtime addresses; OTLP, like the
 * reference agent, gets ELF addresses (start - bias), so its mappings and
 * locations are the same in every process and deduplicate.
 */
struct rep_mapping {
	uint64_t start, limit, file_offset; /* runtime addresses */
	uint64_t bias;
	const char *path;		    /* as in /proc/PID/maps */
	uint8_t file_id[16];		    /* the htlhash */
	const char *gnu_build_id;	    /* hex, or NULL */
};

struct rep_location {
	unsigned kind;	      /* enum frame_kind */
	uint32_t mapping;     /* index into batch->mappings, or REP_NONE */
	uint64_t address;     /* native: ELF address; kernel: kernel address;
				 interpreted: what the unwinder has (line,
				 bytecode offset), sent as is */
	const char *function; /* symbol or qualified name, or NULL */
	const char *filename; /* source file, or NULL */
	uint32_t line;	      /* 0 when unknown */
	/* native frames with inline frames (-inline-frames): the location
	 * after this one (index + 1) is the function this one's code was
	 * inlined into, at the same address: one machine frame, which pprof
	 * and OTLP send as one Location with several Lines, innermost first.
	 * Stacks hold every location of such a chain, in order. */
	bool inl_more;
};

/* Whether location l is a chain's second or later function (see
 * rep_location.inl_more): pprof and OTLP send it inside the first. */
static inline bool rep_inl_member(const struct rep_location *locs, uint32_t l)
{
	return l > 0 && locs[l - 1].inl_more;
}

/* The functions of the chain that starts at location first (1 when it
 * is no chain), within the n locations of the batch. */
static inline uint32_t rep_inl_chain_len(const struct rep_location *locs,
					 uint32_t n, uint32_t first)
{
	uint32_t k = 1;

	while (first + k < n && locs[first + k - 1].inl_more)
		k++;
	return k;
}

/* Leaf first, as the stack really is: kernel frames (if any) first, then
 * user frames.  pprof and OTLP keep this order; folded and SVG always draw
 * kernel frames above user frames. */
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

/* What a sample counts.  A batch may hold both kinds; they share its
 * mappings, locations and stacks.  OTLP sends each kind as its own
 * Profile, pprof as its own sample type, folded and SVG as their own
 * file (name.offcpu.folded, weighted in microseconds). */
enum rep_sample_kind {
	REP_SAMPLE_CPU = 0,    /* count CPU samples at period_ns each */
	REP_SAMPLE_OFFCPU = 1, /* count switches off the CPU, value the ns
				  they lasted together */
};

struct rep_sample {
	unsigned kind;	  /* enum rep_sample_kind */
	uint64_t value;	  /* REP_SAMPLE_OFFCPU: nanoseconds off the CPU */
	uint32_t process; /* index into batch->processes */
	uint32_t stack;	  /* index into batch->stacks */
	uint32_t tid;
	const char *thread_name; /* comm */
	int32_t cpu;		 /* the logical CPU all count events ran on
				    (the pipeline keeps one sample per CPU);
				    -1: unknown, no cpu.logical_number */
	uint64_t count;
	/* May be fewer than count (bounded).  OTLP sends a process's samples
	 * timestamps-only when every one has n_timestamps == count, and
	 * values-only (no timestamps) otherwise: one shape per profile. */
	uint32_t n_timestamps;
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
	/* folded and SVG: a native frame with a source line (DWARF,
	 * -inline-frames) is "func (file.c:line)", not "func" (-folded-lines) */
	bool native_lines;
};

/* Counters every sink keeps; rep_sink_stats() copies them out (thread
 * safe: the OTLP sender thread updates them). */
struct rep_stats {
	uint64_t batches;	/* batches written or sent */
	uint64_t samples;	/* events (sum of sample counts) written or sent */
	uint64_t bytes;		/* bytes written, or sent (after gzip, with the
				   gRPC frame header) */
	uint64_t send_ok;	/* OTLP requests accepted */
	uint64_t send_fail;	/* OTLP attempts that failed (retried) */
	uint64_t send_rejected; /* OTLP batches refused for good (HTTP 4xx,
				   gRPC INVALID_ARGUMENT...): dropped */
	uint64_t queue_drops;	/* batches dropped: queue full (the oldest go),
				   a batch alone over queue_max_bytes, encoding
				   failed, or still queued when the sink closed */
	uint64_t queue_len;	/* batches waiting now */
	uint64_t write_errors;	/* file writes that failed */
};

/*
 * Options for the OTLP sink.  Zero/NULL means unset; the environment
 * (OTEL_EXPORTER_OTLP_*) fills what the flags did not set, see
 * rep_otlp_opts_from_env(), and the sink defaults the rest.
 *
 * endpoint: "host:port" (the reference agent's -collection-agent form) or
 * a URL.  An http:// URL means no TLS, https:// means TLS; a bare
 * host:port uses TLS unless insecure.  For HTTP, "/v1development/profiles"
 * is appended to the endpoint unless endpoint_as_is (a per-signal URL).
 * With no protocol, a bare host:port means gRPC and a URL means
 * http/protobuf (the OTLP default).  Default endpoint: localhost:4317
 * (gRPC) or http://localhost:4318 (HTTP).
 */
struct rep_otlp_opts {
	const char *endpoint;
	bool endpoint_as_is;
	const char *protocol;  /* "grpc" or "http/protobuf" */
	bool insecure;	       /* no TLS for a bare host:port */
	const char *headers;   /* "k=v,k2=v2", percent-encoded */
	const char *ca_file;   /* PEM bundle to verify the receiver, or NULL */
	unsigned timeout_ms;   /* per request; default 10000 */
	const char *compression; /* "gzip" (default) or "none" */
	unsigned queue_max;	 /* batches kept while the receiver is down (64) */
	size_t queue_max_bytes;	 /* and their bytes (64 MiB) */
	unsigned retry_initial_ms; /* first backoff (1000); doubles, with jitter */
	unsigned retry_max_ms;	   /* backoff cap (30000) */
};

/*
 * Fill the unset fields of o from OTEL_EXPORTER_OTLP_PROFILES_* or else
 * OTEL_EXPORTER_OTLP_*: ENDPOINT (the PROFILES_ one is used as is), PROTOCOL
 * (grpc, http/protobuf), HEADERS, TIMEOUT (ms), COMPRESSION (gzip, none),
 * INSECURE (true, false), CERTIFICATE.  Flags win: call this after the
 * flags are in o.  The strings point into the environment.  Returns 0, or
 * -EINVAL when a variable has a value we cannot use (logged; the other
 * variables are still applied).
 */
int rep_otlp_opts_from_env(struct rep_otlp_opts *o);

struct rep_sink;

/*
 * Open a file sink; the format comes from the extension: ".folded",
 * ".pb.gz"/".pprof" (gzip'd pprof), ".svg", ".otlp" (an OTLP request body).
 * With rotate set, each write goes to PATH with the interval's start time
 * inserted before the extension; otherwise each write replaces the file
 * (the last batch, which is the whole run when the pipeline accumulates).
 * Returns 0 or -EINVAL (unknown extension).
 */
int rep_file_sink_open(const char *path, bool rotate, struct rep_sink **out);
/* Open an OTLP sink with a sender thread; never blocks the caller.  opts'
 * strings are copied.  Returns 0, or -EINVAL (bad endpoint, protocol,
 * compression or headers; logged), or -ENOMEM.  The process must ignore
 * SIGPIPE: libcurl runs with CURLOPT_NOSIGNAL (threads) and then leaves
 * it to the caller. */
int rep_otlp_sink_open(const struct rep_otlp_opts *opts, struct rep_sink **out);
/* Encode and write (file) or queue (OTLP) one batch.  Returns 0 or a
 * negative errno (the sink counts the failure).  One writer at a time per
 * sink; the batch is not used after the call returns. */
int rep_sink_write(struct rep_sink *s, const struct rep_batch *b);
void rep_sink_stats(struct rep_sink *s, struct rep_stats *out);
/* Flush and stop: OTLP tries to send what is queued for up to timeout_ms
 * (less when its next retry would come later) and drops, counting them,
 * the batches left.  rep_sink_stats() then gives the final counts; no
 * write may follow.  NULL is fine. */
void rep_sink_finish(struct rep_sink *s, unsigned timeout_ms);
/* rep_sink_finish() (a no-op the second time), then free.  NULL is
 * fine. */
void rep_sink_close(struct rep_sink *s, unsigned timeout_ms);

/* Does the batch hold samples of this kind (enum rep_sample_kind)? */
bool rep_batch_has(const struct rep_batch *b, unsigned kind);
/*
 * The batch with only the samples of one kind, for the formats that
 * weigh stacks by one number (folded, SVG, which count every sample they
 * are given): *view shares b's tables and its samples are *samples
 * (malloc'd, the caller frees).  Off-CPU samples count their microseconds
 * (rounded; under half a microsecond drops).  Returns 0 or -ENOMEM.
 */
int rep_batch_view(const struct rep_batch *b, unsigned kind,
		   struct rep_batch *view, struct rep_sample **samples);

/* Format-level encoders, for tests and for the file sink.  Each returns a
 * malloc'd buffer in *buf (caller frees; text formats are NUL-terminated,
 * not counted in *len) and 0, or a negative errno (-ENOMEM).  Samples with
 * count 0 and indices out of range are skipped.  An OTLP request body is
 * also a valid ProfilesData (same field numbers): the .otlp file format.
 * svg: title NULL means "Flame Graph". */
int rep_encode_folded(const struct rep_batch *b, char **buf, size_t *len);
int rep_encode_pprof(const struct rep_batch *b, void **buf, size_t *len); /* gzip'd */
int rep_encode_otlp(const struct rep_batch *b, void **buf, size_t *len);  /* raw protobuf */
int rep_encode_svg(const struct rep_batch *b, const char *title, char **buf,
		   size_t *len);

/*
 * Copy s into out (size bytes with the NUL) with each ill-formed UTF-8
 * subsequence replaced by U+FFFD, one per maximal subpart as Unicode §3.9
 * recommends (what Python's decode(errors="replace") does): a comm the
 * kernel cut inside a character keeps its name and ends in one U+FFFD.
 * Never cuts a character: when out is too small the result ends at the last
 * whole one.  Returns the length the whole result needs, NUL not counted,
 * at most 3 * strlen(s): rep_utf8_fix(NULL, 0, s) + 1 sizes a buffer.
 */
size_t rep_utf8_fix(char *out, size_t size, const char *s);

/* The display name of a location, as folded and SVG print it: function,
 * "name_[k]" for kernel frames, "name (file:line)" for an interpreter's
 * frame (the file's basename), "[name]" for unwinding errors, "basename+0xADDRESS"
 * (the mapping's file, the ELF address) when there is no symbol, "0xADDRESS"
 * with no mapping either.  ';' becomes ':' and control characters '?', so a
 * name is always one folded frame.  Writes at most n bytes, NUL included,
 * and never half a character. */
void rep_location_name(const struct rep_batch *b, const struct rep_location *l,
		       char *buf, size_t n);

#endif
