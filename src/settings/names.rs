//! Every PostgreSQL setting name, and "did you mean" for a mistyped one.

use super::table::NAMES;

/// Suggest the modelled name nearest `name`, unless it is not near any, or
/// some PostgreSQL setting pgiosim does not model is as near (then pointing
/// at a modelled one could mislead: "checkpoint" is as near
/// checkpoint_warning as checkpoint_timeout).
pub(super) fn suggest(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if is_postgres_setting(&lower) {
        return None;
    }
    let score = |candidate: &str| strsim::jaro_winkler(&lower, candidate);
    let (best, best_score) = NAMES
        .iter()
        .map(|candidate| (*candidate, score(candidate)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    if best_score < SUGGESTION_THRESHOLD {
        return None;
    }
    let other_is_nearer = POSTGRES_SETTING_NAMES
        .iter()
        .filter(|candidate| !NAMES.contains(candidate))
        .any(|candidate| score(candidate) >= best_score);
    (!other_is_nearer).then(|| best.to_string())
}

/// Jaro-Winkler similarity from which a name counts as a likely typo.
pub(super) const SUGGESTION_THRESHOLD: f64 = 0.88;

pub(super) fn is_postgres_setting(lower: &str) -> bool {
    POSTGRES_SETTING_NAMES.binary_search(&lower).is_ok()
}

/// Every setting name of PostgreSQL 15 (`pg_settings` of 15.18 plus the
/// hidden ones), of later releases up to the development branch
/// (`guc_parameters.dat`), and a few removed ones still seen in old files;
/// lower case, sorted.
pub(super) const POSTGRES_SETTING_NAMES: &[&str] = &[
    "add_missing_from",
    "allow_alter_system",
    "allow_in_place_tablespaces",
    "allow_system_table_mods",
    "application_name",
    "archive_cleanup_command",
    "archive_command",
    "archive_library",
    "archive_mode",
    "archive_timeout",
    "array_nulls",
    "authentication_timeout",
    "autovacuum",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_score_weight",
    "autovacuum_analyze_threshold",
    "autovacuum_freeze_max_age",
    "autovacuum_freeze_score_weight",
    "autovacuum_max_parallel_workers",
    "autovacuum_max_workers",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_multixact_freeze_score_weight",
    "autovacuum_naptime",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_vacuum_insert_score_weight",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_max_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_score_weight",
    "autovacuum_vacuum_threshold",
    "autovacuum_work_mem",
    "autovacuum_worker_slots",
    "backend_flush_after",
    "backslash_quote",
    "backtrace_functions",
    "bgwriter_all_maxpages",
    "bgwriter_all_percent",
    "bgwriter_delay",
    "bgwriter_flush_after",
    "bgwriter_lru_maxpages",
    "bgwriter_lru_multiplier",
    "bgwriter_lru_percent",
    "block_size",
    "bonjour",
    "bonjour_name",
    "bytea_output",
    "check_function_bodies",
    "checkpoint_completion_target",
    "checkpoint_flush_after",
    "checkpoint_segments",
    "checkpoint_timeout",
    "checkpoint_warning",
    "client_connection_check_interval",
    "client_encoding",
    "client_min_messages",
    "cluster_name",
    "commit_delay",
    "commit_siblings",
    "commit_timestamp_buffers",
    "compute_query_id",
    "config_file",
    "constraint_exclusion",
    "cpu_index_tuple_cost",
    "cpu_operator_cost",
    "cpu_tuple_cost",
    "createrole_self_grant",
    "cursor_tuple_fraction",
    "custom_variable_classes",
    "data_checksums",
    "data_directory",
    "data_directory_mode",
    "data_sync_retry",
    "datestyle",
    "db_user_namespace",
    "deadlock_timeout",
    "debug_assertions",
    "debug_copy_parse_plan_trees",
    "debug_deadlocks",
    "debug_discard_caches",
    "debug_exec_backend",
    "debug_io_direct",
    "debug_logical_replication_streaming",
    "debug_parallel_query",
    "debug_pretty_print",
    "debug_print_parse",
    "debug_print_plan",
    "debug_print_raw_parse",
    "debug_print_rewritten",
    "debug_raw_expression_coverage_test",
    "debug_write_read_parse_plan_trees",
    "default_statistics_target",
    "default_table_access_method",
    "default_tablespace",
    "default_text_search_config",
    "default_toast_compression",
    "default_transaction_deferrable",
    "default_transaction_isolation",
    "default_transaction_read_only",
    "default_with_oids",
    "dynamic_library_path",
    "dynamic_shared_memory_type",
    "effective_cache_size",
    "effective_io_concurrency",
    "effective_wal_level",
    "enable_async_append",
    "enable_bitmapscan",
    "enable_distinct_reordering",
    "enable_eager_aggregate",
    "enable_gathermerge",
    "enable_group_by_reordering",
    "enable_groupagg",
    "enable_hashagg",
    "enable_hashjoin",
    "enable_incremental_sort",
    "enable_indexonlyscan",
    "enable_indexscan",
    "enable_material",
    "enable_memoize",
    "enable_mergejoin",
    "enable_nestloop",
    "enable_parallel_append",
    "enable_parallel_hash",
    "enable_partition_pruning",
    "enable_partitionwise_aggregate",
    "enable_partitionwise_join",
    "enable_presorted_aggregate",
    "enable_self_join_elimination",
    "enable_seqscan",
    "enable_sort",
    "enable_tidscan",
    "escape_string_warning",
    "event_source",
    "event_triggers",
    "exit_on_error",
    "extension_control_path",
    "extension_destdir",
    "external_pid_file",
    "extra_float_digits",
    "file_copy_method",
    "file_extend_method",
    "force_parallel_mode",
    "from_collapse_limit",
    "fsync",
    "full_page_writes",
    "geqo",
    "geqo_effort",
    "geqo_generations",
    "geqo_pool_size",
    "geqo_seed",
    "geqo_selection_bias",
    "geqo_threshold",
    "gin_fuzzy_search_limit",
    "gin_pending_list_limit",
    "gss_accept_delegation",
    "hash_mem_multiplier",
    "hba_file",
    "hosts_file",
    "hot_standby",
    "hot_standby_feedback",
    "huge_page_size",
    "huge_pages",
    "huge_pages_status",
    "icu_validation_level",
    "ident_file",
    "idle_in_transaction_session_timeout",
    "idle_replication_slot_timeout",
    "idle_session_timeout",
    "ignore_checksum_failure",
    "ignore_invalid_pages",
    "ignore_system_indexes",
    "in_hot_standby",
    "integer_datetimes",
    "intervalstyle",
    "io_combine_limit",
    "io_max_combine_limit",
    "io_max_concurrency",
    "io_max_workers",
    "io_method",
    "io_min_workers",
    "io_worker_idle_timeout",
    "io_worker_launch_interval",
    "io_workers",
    "is_superuser",
    "jit",
    "jit_above_cost",
    "jit_debugging_support",
    "jit_dump_bitcode",
    "jit_expressions",
    "jit_inline_above_cost",
    "jit_optimize_above_cost",
    "jit_profiling_support",
    "jit_provider",
    "jit_tuple_deforming",
    "join_collapse_limit",
    "krb_caseins_users",
    "krb_server_keyfile",
    "krb_srvname",
    "lc_collate",
    "lc_ctype",
    "lc_messages",
    "lc_monetary",
    "lc_numeric",
    "lc_time",
    "listen_addresses",
    "lo_compat_privileges",
    "local_preload_libraries",
    "lock_timeout",
    "log_autoanalyze_min_duration",
    "log_autovacuum_min_duration",
    "log_btree_build_stats",
    "log_checkpoints",
    "log_connections",
    "log_destination",
    "log_directory",
    "log_disconnections",
    "log_duration",
    "log_error_verbosity",
    "log_executor_stats",
    "log_file_mode",
    "log_filename",
    "log_hostname",
    "log_line_prefix",
    "log_lock_failures",
    "log_lock_waits",
    "log_min_duration_sample",
    "log_min_duration_statement",
    "log_min_error_statement",
    "log_min_messages",
    "log_parameter_max_length",
    "log_parameter_max_length_on_error",
    "log_parser_stats",
    "log_planner_stats",
    "log_recovery_conflict_waits",
    "log_replication_commands",
    "log_rotation_age",
    "log_rotation_size",
    "log_startup_progress_interval",
    "log_statement",
    "log_statement_max_length",
    "log_statement_sample_rate",
    "log_statement_stats",
    "log_temp_files",
    "log_timezone",
    "log_transaction_sample_rate",
    "log_truncate_on_rotation",
    "logging_collector",
    "logical_decoding_work_mem",
    "maintenance_io_concurrency",
    "maintenance_work_mem",
    "max_active_replication_origins",
    "max_connections",
    "max_files_per_process",
    "max_fsm_pages",
    "max_fsm_relations",
    "max_function_args",
    "max_identifier_length",
    "max_index_keys",
    "max_locks_per_transaction",
    "max_logical_replication_workers",
    "max_notify_queue_pages",
    "max_parallel_apply_workers_per_subscription",
    "max_parallel_maintenance_workers",
    "max_parallel_workers",
    "max_parallel_workers_per_gather",
    "max_pred_locks_per_page",
    "max_pred_locks_per_relation",
    "max_pred_locks_per_transaction",
    "max_prepared_transactions",
    "max_repack_replication_slots",
    "max_replication_slots",
    "max_slot_wal_keep_size",
    "max_stack_depth",
    "max_standby_archive_delay",
    "max_standby_streaming_delay",
    "max_sync_workers_per_subscription",
    "max_wal_senders",
    "max_wal_size",
    "max_worker_processes",
    "md5_password_warnings",
    "min_dynamic_shared_memory",
    "min_eager_agg_group_size",
    "min_parallel_index_scan_size",
    "min_parallel_relation_size",
    "min_parallel_table_scan_size",
    "min_wal_size",
    "multixact_member_buffers",
    "multixact_offset_buffers",
    "notify_buffers",
    "num_os_semaphores",
    "oauth_validator_libraries",
    "old_snapshot_threshold",
    "operator_precedence_warning",
    "optimize_bounded_sort",
    "parallel_leader_participation",
    "parallel_setup_cost",
    "parallel_tuple_cost",
    "password_encryption",
    "password_expiration_warning_threshold",
    "plan_cache_mode",
    "port",
    "post_auth_delay",
    "pre_auth_delay",
    "primary_conninfo",
    "primary_slot_name",
    "promote_trigger_file",
    "quote_all_identifiers",
    "random_page_cost",
    "recovery_end_command",
    "recovery_init_sync_method",
    "recovery_min_apply_delay",
    "recovery_prefetch",
    "recovery_target",
    "recovery_target_action",
    "recovery_target_inclusive",
    "recovery_target_lsn",
    "recovery_target_name",
    "recovery_target_time",
    "recovery_target_timeline",
    "recovery_target_xid",
    "recursive_worktable_factor",
    "redirect_stderr",
    "regex_flavor",
    "remove_temp_files_after_crash",
    "replacement_sort_tuples",
    "reserved_connections",
    "restart_after_crash",
    "restore_command",
    "restrict_nonsystem_relation_kind",
    "role",
    "row_security",
    "scram_iterations",
    "search_path",
    "seed",
    "segment_size",
    "send_abort_for_crash",
    "send_abort_for_kill",
    "seq_page_cost",
    "serializable_buffers",
    "server_encoding",
    "server_version",
    "server_version_num",
    "session_authorization",
    "session_preload_libraries",
    "session_replication_role",
    "shared_buffers",
    "shared_memory_size",
    "shared_memory_size_in_huge_pages",
    "shared_memory_type",
    "shared_preload_libraries",
    "silent_mode",
    "sql_inheritance",
    "ssl",
    "ssl_ca_file",
    "ssl_cert_file",
    "ssl_ciphers",
    "ssl_crl_dir",
    "ssl_crl_file",
    "ssl_dh_params_file",
    "ssl_ecdh_curve",
    "ssl_groups",
    "ssl_key_file",
    "ssl_library",
    "ssl_max_protocol_version",
    "ssl_min_protocol_version",
    "ssl_passphrase_command",
    "ssl_passphrase_command_supports_reload",
    "ssl_prefer_server_ciphers",
    "ssl_renegotiation_limit",
    "ssl_sni",
    "ssl_tls13_ciphers",
    "standard_conforming_strings",
    "standby_mode",
    "statement_timeout",
    "stats_fetch_consistency",
    "stats_temp_directory",
    "subtransaction_buffers",
    "summarize_wal",
    "superuser_reserved_connections",
    "sync_replication_slots",
    "synchronize_seqscans",
    "synchronized_standby_slots",
    "synchronous_commit",
    "synchronous_standby_names",
    "syslog_facility",
    "syslog_ident",
    "syslog_sequence_numbers",
    "syslog_split_messages",
    "tcp_keepalives_count",
    "tcp_keepalives_idle",
    "tcp_keepalives_interval",
    "tcp_user_timeout",
    "temp_buffers",
    "temp_file_limit",
    "temp_tablespaces",
    "timezone",
    "timezone_abbreviations",
    "timing_clock_source",
    "trace_connection_negotiation",
    "trace_lock_oidmin",
    "trace_lock_table",
    "trace_locks",
    "trace_lwlocks",
    "trace_notify",
    "trace_recovery_messages",
    "trace_sort",
    "trace_syncscan",
    "trace_userlocks",
    "track_activities",
    "track_activity_query_size",
    "track_commit_timestamp",
    "track_cost_delay_timing",
    "track_counts",
    "track_functions",
    "track_io_timing",
    "track_wal_io_timing",
    "transaction_buffers",
    "transaction_deferrable",
    "transaction_isolation",
    "transaction_read_only",
    "transaction_timeout",
    "transform_null_equals",
    "trigger_file",
    "unix_socket_directories",
    "unix_socket_directory",
    "unix_socket_group",
    "unix_socket_permissions",
    "update_process_title",
    "vacuum_buffer_usage_limit",
    "vacuum_cleanup_index_scale_factor",
    "vacuum_cost_delay",
    "vacuum_cost_limit",
    "vacuum_cost_page_dirty",
    "vacuum_cost_page_hit",
    "vacuum_cost_page_miss",
    "vacuum_defer_cleanup_age",
    "vacuum_failsafe_age",
    "vacuum_freeze_min_age",
    "vacuum_freeze_table_age",
    "vacuum_max_eager_freeze_failure_rate",
    "vacuum_multixact_failsafe_age",
    "vacuum_multixact_freeze_min_age",
    "vacuum_multixact_freeze_table_age",
    "vacuum_truncate",
    "wal_block_size",
    "wal_buffers",
    "wal_compression",
    "wal_consistency_checking",
    "wal_debug",
    "wal_decode_buffer_size",
    "wal_init_zero",
    "wal_keep_segments",
    "wal_keep_size",
    "wal_level",
    "wal_log_hints",
    "wal_receiver_create_temp_slot",
    "wal_receiver_status_interval",
    "wal_receiver_timeout",
    "wal_recycle",
    "wal_retrieve_retry_interval",
    "wal_segment_size",
    "wal_sender_shutdown_timeout",
    "wal_sender_timeout",
    "wal_skip_threshold",
    "wal_summary_keep_time",
    "wal_sync_method",
    "wal_writer_delay",
    "wal_writer_flush_after",
    "work_mem",
    "xmlbinary",
    "xmloption",
    "zero_damaged_pages",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::test_support::*;
    use crate::settings::{SettingError, Settings};

    // --- errors -----------------------------------------------------------------

    #[test]
    fn unknown_names_suggest_the_nearest_modelled_one() {
        for (typo, meant) in [
            ("shared_buffer", "shared_buffers"),
            ("Shared_Bufers", "shared_buffers"),
            ("sharedbuffers", "shared_buffers"),
            ("wal_buffer", "wal_buffers"),
            ("checkpoint_timout", "checkpoint_timeout"),
            ("max_wal_sizes", "max_wal_size"),
            ("walwriter_delay", "wal_writer_delay"),
            ("bgwriter_lru_max_pages", "bgwriter_lru_maxpages"),
            ("synchronous_comit", "synchronous_commit"),
            ("commit_sibling", "commit_siblings"),
            ("checkpoint_completion", "checkpoint_completion_target"),
            ("autovaccum", "autovacuum"),
            ("full_page_write", "full_page_writes"),
        ] {
            assert_eq!(
                err(typo, "1"),
                SettingError::Unknown {
                    name: typo.to_string(),
                    suggestion: Some(meant.to_string()),
                },
                "{typo}"
            );
        }
        assert_eq!(
            err("shared_buffer", "16GB").to_string(),
            "unknown setting \"shared_buffer\"; did you mean shared_buffers?"
        );
    }

    #[test]
    fn no_suggestion_for_names_far_from_any_modelled_one() {
        for name in ["foo", "scale", "clients", "buffers", "checkpoint", "x"] {
            let e = err(name, "1");
            assert_eq!(
                e,
                SettingError::Unknown {
                    name: name.to_string(),
                    suggestion: None
                },
                "{name}"
            );
        }
        let message = err("foo", "1").to_string();
        assert!(message.starts_with("unknown setting \"foo\""), "{message}");
        assert!(message.contains("not a PostgreSQL setting"), "{message}");
        assert!(message.contains("shared_buffers, wal_buffers"), "{message}");
    }

    #[test]
    fn a_postgresql_setting_that_is_not_modelled_is_named_as_such() {
        for name in [
            "work_mem",
            "max_connections",
            "bgwriter_lru_percent",
            "fsync",
            "WORK_MEM",
        ] {
            let e = err(name, "64MB");
            assert_eq!(
                e,
                SettingError::Unknown {
                    name: name.to_string(),
                    suggestion: None
                }
            );
        }
        assert_eq!(
            err("work_mem", "64MB").to_string(),
            "work_mem is a PostgreSQL setting that pgiosim does not model, so it cannot be set"
        );
        // A typo of an unmodelled setting must not point at a modelled one.
        assert_eq!(
            err("bgwriter_lru_percen", "1"),
            SettingError::Unknown {
                name: "bgwriter_lru_percen".to_string(),
                suggestion: None
            }
        );
        assert!(
            err("pg_stat_statements.max", "1")
                .to_string()
                .contains("extension setting")
        );
    }

    #[test]
    fn names_match_the_table_and_are_postgresql_settings() {
        let table: Vec<&str> = crate::settings::table::TABLE
            .iter()
            .map(|row| row.name)
            .collect();
        assert_eq!(table, Settings::NAMES);
        for name in Settings::NAMES {
            assert!(is_postgres_setting(name), "{name}");
        }
        let mut sorted = POSTGRES_SETTING_NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, POSTGRES_SETTING_NAMES, "must be sorted and unique");
        assert!(
            POSTGRES_SETTING_NAMES
                .iter()
                .all(|name| *name == name.to_ascii_lowercase())
        );
    }
}
