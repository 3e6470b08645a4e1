/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every metric the agent exposes, once.  From this list come /metrics
 * (each family with its HELP and TYPE), the exit summary (key=value on
 * stderr) and the README's table (`ebpf-profiler metrics-table`); a test
 * checks the README against it.  The BPF side's per-CPU counters are one
 * family, bpf_events_total{event}: its series come from bpf/profiler.h's
 * METRICS_LIST and the interpreters' <NAME>_METRICS ranges, with their
 * own help.
 *
 *   X(name, type, labels, help, key, source)
 *
 * name:   after the prefix "ebpf_profiler_"; never renamed (scrapers
 *         and tests read them).
 * type:   counter (the name ends in _total) or gauge.
 * labels: the label names of its series, "" when it has one series.
 * help:   the HELP text, one sentence.
 * key:    its key in the exit summary; a family with labels has keys
 *         key_<label value>, or a key of its own where the summary had
 *         one before the list (the summary keeps those: tests and users
 *         read them).
 * source: where the value comes from, in struct metrics_snap *s:
 *         VALUE(expr), the same figure for both outputs;
 *         SCALED(expr, k): the summary shows expr * k (its unit is in
 *         its key: "startup_ms" beside startup_seconds);
 *         LABELS(LABEL(value, expr), ...): one series a label value,
 *         summary key <key>_<value>; LABEL_KEY(value, expr, key) gives the
 *         series a summary key of its own ("": none);
 *         PER_RUNTIME(field): a series an interpreter runtime, the field
 *         of its struct interp_stats;
 *         PER_PROG(field): a series a BPF program, the field of its struct
 *         tracer_prog_stats, their sum in the summary;
 *         SERIES(fn): series_fn(s, o) in metrics.c writes its series (the
 *         families whose series are not one field each).
 *
 * The order is the summary's: samples= stays first (tests find the line
 * by it).
 */
#ifndef EP_METRICS_LIST_H
#define EP_METRICS_LIST_H

#define AGENT_METRICS(X)                                                       \
	X(samples_total, counter, "", "Samples aggregated.", "samples",        \
	  VALUE(s->ts.samples))                                                \
	X(samples_lost_total, counter, "",                                     \
	  "Samples lost: ring buffer full, record queue full, aggregation tables full or malformed.", \
	  "lost",                                                              \
	  VALUE(s->bpf[METRIC_RINGBUF_FULL] + s->ds.trace_drops +              \
		s->ts.dropped_full + s->ts.bad_records))                       \
	X(samples_complete_total, counter, "",                                 \
	  "Samples whose user stack reached the process or thread entry.",     \
	  "complete", VALUE(s->ts.complete))                                   \
	X(samples_unsynced_total, counter, "",                                 \
	  "Samples of processes not loaded yet (frame-pointer walk).",         \
	  "unsynced", VALUE(s->ts.unsynced))                                   \
	X(samples_truncated_total, counter, "",                                \
	  "Samples whose stack was cut by the frame limit.", "truncated",      \
	  VALUE(s->ts.truncated))                                              \
	X(samples_kernel_only_total, counter, "",                              \
	  "Samples without a user stack.", "kernel_only",                      \
	  VALUE(s->ts.kernel_only))                                            \
	X(offcpu_samples_total, counter, "",                                   \
	  "Off-CPU records aggregated (-off-cpu-threshold).", "offcpu",        \
	  VALUE(s->ts.offcpu))                                                 \
	X(offcpu_seconds_total, counter, "",                                   \
	  "Time off the CPU that the aggregated off-CPU records carry.",       \
	  "offcpu_ms", SCALED(s->ts.offcpu_ns / 1e9, 1e3))                     \
	X(processes_sampled, gauge, "",                                        \
	  "Processes seen in samples since the start.", "processes",           \
	  VALUE(s->pids_seen))                                                 \
	X(bpf_events_total, counter, "event",                                  \
	  "BPF per-CPU counters, by event (each event's meaning in a comment before its series).", \
	  "bpf", SERIES(bpf_events))                                           \
	X(unwind_errors_total, counter, "reason",                              \
	  "Stacks that ended in an error, by reason.", "unwind_errors",        \
	  SERIES(unwind_errors))                                               \
	X(map_entries, gauge, "map", "Entries the daemon keeps in each BPF map.", \
	  "rows", LABELS(                                                      \
		LABEL_KEY("mappings", s->ps.trie_entries, "mappings"),         \
		LABEL_KEY("delta_rows", s->es.rows_used, "rows"),              \
		LABEL_KEY("rules", s->es.rules_used, "rules_used")))           \
	X(map_capacity, gauge, "map", "Capacity of each BPF map.", "capacity", \
	  LABELS(                                                              \
		LABEL("mappings", s->cap_mappings),                            \
		LABEL("delta_rows", s->es.rows_cap),                           \
		LABEL("rules", s->cap_rules)))                                 \
	X(map_allocated, gauge, "map",                                         \
	  "Entries allocated in the kernel for a map that grows as needed, up to its capacity.", \
	  "allocated", LABELS(                                                 \
		LABEL("delta_rows", s->es.rows_alloc)))                        \
	X(map_full_total, counter, "map",                                      \
	  "Updates refused because a map was full, or (a map that allocates its entries as they are added) the kernel had no memory for the entry; the warning says which.", "rows_full", \
	  SERIES(map_full))                                                    \
	X(files_over_share_total, counter, "table,limit",                      \
	  "Files walked by frame pointer because they would take more than their share of a table (limit: the file's own, or its owner's with the owner's other files).", \
	  "over_share", SERIES(over_share))                                    \
	X(rules_freed_total, counter, "",                                      \
	  "Unwind rules taken back from unloaded files.", "rules_freed",       \
	  VALUE(s->es.rules_freed))                                            \
	X(row_chunks_created_total, counter, "",                               \
	  "Chunks of stack-delta rows created (1 MiB each), as files need them or at start-up.", \
	  "chunks_created", VALUE(s->es.chunks_created))                       \
	X(row_chunk_batches_total, counter, "",                                \
	  "Updates of the array of row chunks that added chunks: the kernel waits for an RCU grace period after each.", \
	  "chunk_batches", VALUE(s->es.chunk_batches))                         \
	X(row_chunks_prefilled_total, counter, "",                             \
	  "Chunks of stack-delta rows created at start-up from the last run's count (the cache's hint).", \
	  "chunks_prefilled", VALUE(s->es.chunks_prefilled))                   \
	X(row_chunks_unplaced_total, counter, "",                              \
	  "Chunks of stack-delta rows made at start-up that the kernel refused into the array of maps: their files' frames are walked by frame pointer.", \
	  "chunks_unplaced", VALUE(s->es.chunks_unplaced))                     \
	X(interp_processes, gauge, "runtime",                                  \
	  "Processes whose frames of this runtime are unwound.",               \
	  "interp_processes", PER_RUNTIME(procs))                              \
	X(interp_files_detected_total, counter, "runtime",                     \
	  "Files found to hold this runtime.", "interp_files",                 \
	  PER_RUNTIME(files))                                                  \
	X(interp_files_unsupported_total, counter, "runtime",                  \
	  "Files holding a version or build of this runtime not supported (its module names which).", \
	  "interp_unsupported", PER_RUNTIME(files_unsupported))                \
	X(interp_attach_errors_total, counter, "runtime",                      \
	  "Processes of this runtime not unwound: layout refused or table full.", \
	  "interp_attach_errors", PER_RUNTIME(attach_errors))                  \
	X(interp_frames_symbolized_total, counter, "runtime,result",           \
	  "Interpreter frames named, or not (the process was gone or its memory unreadable).", \
	  "interp_symbolized", SERIES(interp_symbolized))                      \
	X(processes, gauge, "", "Processes tracked.", "processes_tracked",     \
	  VALUE(s->ps.procs))                                                  \
	X(files, gauge, "", "Executable files tracked.", "files",              \
	  VALUE(s->es.files))                                                  \
	X(files_loaded, gauge, "", "Files with stack deltas in the BPF maps.", \
	  "files_loaded", VALUE(s->es.loaded))                                 \
	X(extracted_files_total, counter, "",                                  \
	  "Files whose stack deltas were computed.", "extracted",              \
	  VALUE(s->es.extracted))                                              \
	X(extraction_seconds_total, counter, "",                               \
	  "Time spent extracting stack deltas.", "extraction_ms",              \
	  SCALED(s->es.extract_ns / 1e9, 1e3))                                 \
	X(cache_hits_total, counter, "",                                       \
	  "Files whose stack deltas came from the cache.", "cache_hits",       \
	  VALUE(s->es.cache_hits))                                             \
	X(cache_misses_total, counter, "",                                     \
	  "Files looked up in the cache and not found.", "cache_misses",       \
	  VALUE(s->cache_off ? 0 : s->es.extracted))                           \
	X(process_events_total, counter, "type",                               \
	  "Process events from BPF.", "process_events",                        \
	  SERIES(process_events))                                              \
	X(syncs_total, counter, "", "Reads of /proc/PID/maps.", "syncs",       \
	  VALUE(s->ps.syncs))                                                  \
	X(sync_requests_total, counter, "result",                              \
	  "Process sync requests the callbacks queued, by result.", "requests", \
	  LABELS(                                                              \
		LABEL("queued", s->ps.requests),                               \
		LABEL("merged", s->ps.requests_merged),                        \
		LABEL("dropped", s->ps.requests_dropped),                      \
		LABEL("served", s->ps.requests_served)))                       \
	X(sync_requests_pending, gauge, "",                                    \
	  "Process sync requests waiting for the poll loop.",                  \
	  "requests_pending", VALUE(s->ps.requests_pending))                   \
	X(sync_requests_capacity, gauge, "",                                   \
	  "Bound on the sync requests queued at once.", "requests_capacity",   \
	  VALUE(PM_REQ_MAX))                                                   \
	X(service_seconds_max, gauge, "",                                      \
	  "Longest step of the poll loop serving sync requests (reading /proc, extracting files).", \
	  "service_ms_max", SCALED(s->service_ns_max / 1e9, 1e3))              \
	X(waiting_records_total, counter, "result",                            \
	  "Records of processes not loaded yet, kept until their sync, by outcome.", \
	  "wait", LABELS(                                                      \
		LABEL_KEY("waited", s->ts.waited, "waited"),                   \
		LABEL("full", s->ts.wait_full),                                \
		LABEL("expired", s->ts.wait_expired)))                         \
	X(drain_stall_seconds_max, gauge, "",                                  \
	  "Longest time the BPF ring buffers went undrained.",                 \
	  "drain_stall_ms", SCALED(s->ds.stall_ns_max / 1e9, 1e3))             \
	X(record_queue_drops_total, counter, "",                               \
	  "Ring records dropped: the queue from the drain thread was full.",   \
	  "record_queue_drops", VALUE(s->ds.queue_drops))                      \
	X(record_queue_bytes, gauge, "",                                       \
	  "Bytes in the queue from the drain thread.", "record_queue_bytes",   \
	  VALUE(s->ds.queue_bytes))                                            \
	X(record_queue_bytes_max, gauge, "",                                   \
	  "The most bytes ever in the queue from the drain thread.",           \
	  "record_queue_bytes_max", VALUE(s->ds.queue_bytes_max))              \
	X(record_queue_capacity_bytes, gauge, "",                              \
	  "Bound on the queue from the drain thread.",                         \
	  "record_queue_capacity_bytes", VALUE(s->ds.queue_bound))             \
	X(exports_total, counter, "result", "OTLP exports by result.",         \
	  "exports", LABELS(                                                   \
		LABEL("ok", s->rs.send_ok),                                    \
		LABEL("failed", s->rs.send_fail)))                             \
	X(queue_drops_total, counter, "",                                      \
	  "Batches dropped because the export queue was full.", "queue_drops", \
	  VALUE(s->rs.queue_drops))                                            \
	X(file_write_errors_total, counter, "",                                \
	  "Output file writes that failed.", "file_write_errors",              \
	  VALUE(s->rs.write_errors))                                           \
	X(sampling_enabled, gauge, "",                                         \
	  "1 when sampling is on (probabilistic mode).", "sampling_enabled",   \
	  VALUE(s->sampling_on ? 1 : 0))                                       \
	X(sampling_toggles_total, counter, "",                                 \
	  "Probabilistic on/off switches.", "sampling_toggles",                \
	  VALUE(s->sampling_toggles))                                          \
	X(startup_seconds, gauge, "",                                          \
	  "Time from start until sampling is live (with -pid, once its processes are loaded).", \
	  "startup_ms", SCALED(s->startup_ns / 1e9, 1e3))                      \
	X(bpf_programs_kept, gauge, "",                                        \
	  "1 when this run's BPF programs are the set the last run kept verified (-keep-programs): the start skipped the verifier.", \
	  "programs_kept", VALUE(s->programs_kept ? 1 : 0))                    \
	X(load_seconds, gauge, "",                                             \
	  "The time loading -pid's processes, or the busy ones the start-up scan found (what the cache speeds up; it overlaps the programs' load; the others load on their first sample).", \
	  "load_ms", SCALED(s->load_ns / 1e9, 1e3))                            \
	X(startup_scan_processes, gauge, "why",                                \
	  "Processes the start-up scan looked at (listed), chose to load by why (running, busy since their start, ran during the scan), and chose past its bound (capped).", \
	  "scan", LABELS(                                                      \
		LABEL("listed", s->ps.scan_listed),                            \
		LABEL("running", s->ps.scan_running),                          \
		LABEL("busy", s->ps.scan_busy),                                \
		LABEL("ran", s->ps.scan_grew),                                 \
		LABEL("capped", s->ps.scan_capped)))                           \
	X(uptime_seconds, gauge, "", "Time since the agent started.",          \
	  "seconds", VALUE(s->uptime_ns / 1e9))                                \
	X(file_read_faults_total, counter, "",                                 \
	  "Pages of files truncated while mapped, read as zeros.",             \
	  "file_read_faults", VALUE(s->read_faults))                           \
	X(agent_cpu_seconds_total, counter, "",                                \
	  "CPU time of the agent's process, user and system.", "agent_cpu_ms", \
	  SCALED(s->cpu_ns / 1e9, 1e3))                                        \
	X(agent_resident_memory_bytes, gauge, "",                              \
	  "Resident memory of the agent's process (with the mmap'ed BPF maps).", \
	  "rss_kb", SCALED(s->rss_bytes, 1.0 / 1024))                          \
	X(agent_resident_memory_bytes_max, gauge, "",                          \
	  "The most resident memory the agent's process ever had.",            \
	  "rss_max_kb", SCALED(s->rss_max_bytes, 1.0 / 1024))                  \
	X(bpf_runs_total, counter, "program",                                  \
	  "Runs of each BPF program (needs kernel.bpf_stats_enabled=1).",      \
	  "bpf_runs", PER_PROG(run_cnt))                                       \
	X(bpf_run_seconds_total, counter, "program",                           \
	  "Time in each BPF program, tail calls included (needs kernel.bpf_stats_enabled=1).", \
	  "bpf_run_ms", SERIES(bpf_run_seconds))                               \
	X(bpf_verified_instructions, gauge, "program",                         \
	  "Instructions the kernel's verifier processed to load each BPF program: most of the start-up's time (kernel 5.16+).", \
	  "bpf_verified_insns", PER_PROG(verified_insns))                      \
	X(build_info, gauge, "version,revision", "Version of the agent.",      \
	  "version", SERIES(build_info))                                       \
	X(files_over_budget_total, counter, "reason",                          \
	  "Files given up on (no names, no debug file, a section left out), by the budget they were over.", \
	  "files_over_budget", SERIES(over_budget))                            \
	X(mapping_mismatch_total, counter, "reason",                           \
	  "Files opened for a mapping and refused: not the file the maps line names.", \
	  "mapping_mismatch", SERIES(mapping_mismatch))                        \
	X(inline_tables, gauge, "",                                            \
	  "Files with an inline-frames table now (-inline-frames).",           \
	  "inline_tables", VALUE(s->inl.tables))                               \
	X(inline_tables_functions_only, gauge, "",                             \
	  "Of inline_tables, those that hold functions only (over their byte budget).", \
	  "inline_functions_only", VALUE(s->inl.funcs_only))                   \
	X(inline_table_bytes, gauge, "", "Bytes the inline-frames tables hold.", \
	  "inline_bytes", VALUE(s->inl.bytes))                                 \
	X(inline_build_seconds_total, counter, "",                             \
	  "Time spent building inline-frames tables.", "inline_build_ms",      \
	  SCALED(s->inl.build_ns / 1e9, 1e3))                                  \
	X(inline_files_without_total, counter, "reason",                       \
	  "Files given no inline-frames table: no DWARF, an error, over the time bound, or the cache full.", \
	  "inline_without", LABELS(                                            \
		LABEL("no_dwarf", s->inl.no_dwarf),                            \
		LABEL("error", s->inl.errors),                                 \
		LABEL("timeout", s->inl.timeouts),                             \
		LABEL("full", s->inl.full)))                                   \
	X(inline_tables_loaded_total, counter, "from",                         \
	  "Inline-frames tables made: built from DWARF, or read from the persistent cache.", \
	  "inline_loaded", LABELS(                                             \
		LABEL("built", s->inl.built),                                  \
		LABEL("cache", s->inl.from_store)))                            \
	X(inline_cache_rejected_total, counter, "",                            \
	  "Inline-frames tables in the cache that the checked loader refused (then rebuilt).", \
	  "inline_cache_rejected", VALUE(s->inl.store_rejected))               \
	X(inline_tables_pending, gauge, "",                                    \
	  "Files whose inline-frames table waits for a debug file download (debuginfod).", \
	  "inline_pending", VALUE(s->inl.pending))                             \
	X(debuginfod_fetches_total, counter, "outcome",                        \
	  "Debug files asked of debuginfod (DEBUGINFOD_URLS): fetched, found in its cache, or failed (not_found, timeout, too_big, error, queue_full).", \
	  "debuginfod", LABELS(                                                \
		LABEL("fetched", s->dbgd.fetched),                             \
		LABEL("cache_hit", s->dbgd.cache_hits),                        \
		LABEL("not_found", s->dbgd.not_found),                         \
		LABEL("timeout", s->dbgd.timeouts),                            \
		LABEL("too_big", s->dbgd.too_big),                             \
		LABEL("error", s->dbgd.errors),                                \
		LABEL("queue_full", s->dbgd.queue_full)))                      \
	X(debuginfod_queued, gauge, "",                                        \
	  "Debug files waiting for or in download from debuginfod.",           \
	  "debuginfod_queued", VALUE(s->dbgd.queued))                          \
	X(debuginfod_fetch_seconds_total, counter, "",                         \
	  "Time spent downloading from debuginfod.", "debuginfod_fetch_ms",    \
	  SCALED(s->dbgd.fetch_ns / 1e9, 1e3))                                 \
	X(cache_enabled, gauge, "reason",                                      \
	  "1 when the cache is in use; else why not (disabled, untrusted_dir, link, error).", \
	  "cache", SERIES(cache_enabled))                                      \
	X(cache_put_errors_total, counter, "", "Cache writes that failed.",    \
	  "cache_put_errors", VALUE(s->cache_put_errors))                      \
	X(metrics_scrapes_total, counter, "",                                  \
	  "Answers the metrics endpoint sent whole.", "metrics_scrapes",       \
	  VALUE(s->ms.served))                                                 \
	X(metrics_clients_closed_total, counter, "reason",                     \
	  "Metrics clients closed before an answer: out of time (2 s) or for a newer one (32 at once).", \
	  "metrics", LABELS(                                                   \
		LABEL_KEY("timeout", s->ms.timeouts, "metrics_timeouts"),      \
		LABEL_KEY("evicted", s->ms.evicted, "metrics_evicted")))

#endif
