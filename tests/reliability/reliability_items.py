"""The reliability checklist's rows (R1–R25), and those our own issues added (R26 on)."""

from __future__ import annotations

from tests.reliability import checklist

__all__ = ["ITEMS"]

ITEMS: tuple[checklist.Item, ...] = (
    checklist.Item(
        "R1",
        "review a job, apply the patch, review the patched object again",
        "empty second patch; one PodGroup",
        (
            checklist.ADM + "test_mutation_is_a_json_patch_that_applies_and_is_idempotent",
            checklist.R + "test_fuzz.py::test_r1_r8_reviews_are_idempotent_and_reinvocation_safe",
        ),
    ),
    checklist.Item(
        "R2",
        "dryRun=true create of a job through the apiserver",
        "patch returned; nothing created",
        ("tests/integration/test_webhooks.py::test_dry_run_creates_nothing_and_foreign_queue_is_denied",),
    ),
    checklist.Item(
        "R3",
        "webhook server stopped (registration left in place): pods (Ignore), a Volcano Job (Fail), kube-system",
        "Ignore: pod admitted; Fail: clear error within timeoutSeconds; kube-system unaffected",
        (checklist.R + "test_process.py::test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied",),
    ),
    checklist.Item(
        "R4",
        "webhook pods rolled by helm upgrade; own namespace excluded in the configuration",
        "recreated, no deadlock",
        (
            checklist.CONF + "test_excluded_namespaces_are_left_out_sorted_and_once",
            checklist.HELM + "test_upgrade_with_changed_values_rolls_and_keeps_every_custom_resource",
        ),
    ),
    checklist.Item(
        "R5",
        "malformed objects and reviews (null containers, no executor, unknown apiVersion, fuzzed)",
        "a warning or a clean denial with status; never a crash",
        (
            checklist.ADM + "test_malformed_reviews_are_denied_not_raised",
            checklist.ADM + "test_bad_objects_are_denied_with_a_message",
            checklist.R + "test_fuzz.py::test_s6_generated_reviews_of_every_kind_get_a_valid_answer",
        ),
    ),
    checklist.Item(
        "R6",
        "body over 3 MiB, forged Content-Length (short and long), huge arrays and strings",
        "rejected before the full read; memory bounded",
        (
            checklist.SRV + "test_body_over_3_mib_is_refused_on_bytes_read",
            checklist.R + "test_fuzz.py::test_r6_s5_hostile_bodies_over_tls_get_answers_and_bounded_memory",
        ),
    ),
    checklist.Item(
        "R7",
        "spark-submit driver creates executors after its PodGroup exists",
        "executors join the group; minMember not double-counted",
        (
            "tests/integration/test_webhooks.py::test_spark_submit_driver_is_gated_until_its_group_is_complete",
            "tests/integration/test_spark_submit_client.py::test_spark_submit_client_mode_executors_are_grouped_admitted_and_bound",
        ),
    ),
    checklist.Item(
        "R8",
        "reviewed again after another webhook added a container (reinvocation)",
        "same result; nothing duplicated",
        (checklist.R + "test_fuzz.py::test_r1_r8_reviews_are_idempotent_and_reinvocation_safe",),
    ),
    checklist.Item(
        "R9",
        "gang of N where only N-1 fit; one of 2,000 pods (10,000 long) on 440 slots, a small gang created meanwhile",
        "nothing bound; Unschedulable/NotEnoughResources event; cycles do not wait for its status writes; "
        "the small gang binds within seconds",
        (
            checklist.SCHED + "test_gangs.py::test_gang_that_does_not_fit_binds_nothing_and_says_why",
            checklist.SCHED
            + "test_backlog.py::test_an_unplaceable_gang_of_thousands_neither_holds_a_cycle_nor_a_small_gang",
        ),
    ),
    checklist.Item(
        "R10",
        "binds over reset, black-holed, cut, slow (latency, 16 KB/s, slow close) connections; chosen binds, "
        "status writes and reconciler creates answered 500, 409, 429 (with and without Retry-After)",
        "failure recorded (FailedScheduling, PodScheduled=False), retried; gang completes; cache matches the API",
        (
            checklist.R + "test_network.py::test_reset_peer_and_timeouts_on_every_component_connection",
            checklist.R + "test_network.py::test_degraded_links_slow_everything_and_lose_nothing",
            checklist.R + "test_calls.py::test_r10_chosen_calls_answered_500_409_429",
            checklist.SCHED
            + "test_status_writer.py::test_a_write_whose_object_changed_meanwhile_is_dropped_and_decided_again",
            "tests/integration/test_vcjob_pacing.py::"
            "test_a_refused_template_costs_one_call_per_attempt_backs_off_and_stops_at_deletion",
            checklist.SCHED + "test_status_writer.py::test_a_failed_bind_is_told_through_the_writer_s_queue",
            "tests/integration/native/test_native_refusal_backoff.py::"
            "test_a_refused_create_waits_its_backoff_restarts_on_a_spec_change_and_ends_with_the_group",
        ),
    ),
    checklist.Item(
        "R11",
        "another writer binds a member to the same node just before our bind (409 already assigned)",
        "success when the node matches; no FailedScheduling",
        (
            checklist.SCHED + "test_restarts.py::test_killed_mid_gang_leaves_no_partial_gang_and_no_double_bind",
            checklist.R + "test_calls.py::test_r11_a_member_bound_by_another_writer_just_before_the_schedulers_bind",
        ),
    ),
    checklist.Item(
        "R12",
        "scheduler process SIGKILLed during a gang's binds, in a loop",
        "0 partial gangs, 0 double binds (counted from the apiserver)",
        (
            checklist.SCHED + "test_restarts.py::test_killed_mid_gang_leaves_no_partial_gang_and_no_double_bind",
            checklist.R + "test_process.py::test_r12_scheduler_sigkilled_mid_binds_in_a_loop",
        ),
    ),
    checklist.Item(
        "R13",
        "minMember raised while the gang is pending",
        "new minMember applied; no partial bind",
        (checklist.R + "test_cluster.py::test_r13_min_member_raised_while_the_gang_is_pending",),
    ),
    checklist.Item(
        "R14",
        "another writer rewrites a PodGroup's status while the scheduler owns it",
        "re-GET and reapply: the scheduler's status converges",
        (checklist.R + "test_calls.py::test_r14_a_podgroup_status_rewritten_by_another_writer_converges",),
    ),
    checklist.Item(
        "R15",
        "apiserver restarted: its new watch cache answers 410 to the components' old resourceVersions",
        "relist; no replayed event (no pod created or bound twice)",
        (
            "tests/bridge/k8s/test_watching.py::test_relist_reports_changed_and_vanished_objects_only",
            "tests/bridge/k8s/test_watching.py::test_410_and_a_refused_watch_list_again_and_report_the_difference",
            checklist.R + "test_process.py::test_r15_r16_apiserver_down_60_s_then_back",
        ),
    ),
    checklist.Item(
        "R16",
        "kube-apiserver stopped for 60 s, then started again",
        "backoff, readiness false, recovery without a restart",
        (
            checklist.R + "test_process.py::test_r15_r16_apiserver_down_60_s_then_back",
            checklist.R + "test_process.py::test_etcd_restarted_under_the_components",
            "tests/bridge/k8s/test_watching.py::test_a_dropped_stream_and_a_server_error_resume_from_the_last_version",
        ),
    ),
    checklist.Item(
        "R17",
        "leader killed with 2 replicas (scheduler lease; controllers SIGKILLed mid-reconcile)",
        "takeover within lease time; nothing done twice",
        (
            checklist.SCHED + "test_restarts.py::test_leader_election_one_leader_then_handover",
            "tests/integration/test_controllers_ha.py::test_one_leader_reconciles_and_a_killed_leader_is_replaced_without_doing_anything_twice",
        ),
    ),
    checklist.Item(
        "R18",
        "queue closed (as vcctl queue close) while its groups are pending and running",
        "new groups held or rejected; running ones continue",
        (
            checklist.ADM + "test_queue_denial_is_403_naming_the_queues_to_use",
            checklist.R + "test_cluster.py::test_r18_queue_closed_under_pending_and_running_groups",
        ),
    ),
    checklist.Item(
        "R19",
        "preemption and reclaim under contention",
        "only within policy; gangs evicted whole or kept whole",
        (
            checklist.SCHED + "test_sharing.py::test_preemption_evicts_for_a_whole_gang_or_not_at_all",
            checklist.SCHED + "test_sharing.py::test_reclaim_takes_back_a_share_for_a_whole_gang",
        ),
    ),
    checklist.Item(
        "R20",
        "a running gang's member pod deleted (PodEvicted -> RestartJob)",
        "PodGroup stays admitted while it terminates (Running, Unknown as Volcano's getPodGroupPhase, Inqueue while "
        "restarting; never Pending); the job's lifecycle policy applies once",
        (
            "tests/integration/test_vcjobs.py::test_tensorflow_seed_restarts_on_eviction_then_completes_with_its_workers",
            checklist.R + "test_cluster.py::test_r20_a_running_gangs_member_deleted",
        ),
    ),
    checklist.Item(
        "R21",
        "the node under a running Volcano Job lost (its kubelet stopped, its Node deleted)",
        "the job's policy (RestartJob) applies; the gang runs again elsewhere; no reservation leaks",
        (checklist.R + "test_cluster.py::test_r21_the_node_under_a_running_volcano_job_deleted",),
    ),
    checklist.Item(
        "R22",
        "serving certificate and CA renewed under load; the caBundle re-injected; a swapped file served",
        "reloaded and re-injected without manual action",
        (
            "tests/integration/test_cert_rotation.py::test_managed_certificate_rotates_under_load_without_a_failed_admission",
            checklist.SRV + "test_a_certificate_swapped_on_disk_is_served_to_new_connections",
        ),
    ),
    checklist.Item(
        "R23",
        "helm upgrade of the installed chart (templated CRDs, changed values)",
        "CRDs updated; custom resources kept",
        (checklist.HELM + "test_upgrade_with_changed_values_rolls_and_keeps_every_custom_resource",),
    ),
    checklist.Item(
        "R24",
        "kube-system jobs and mirror pods while the webhook is down; the configuration's selectors",
        "webhook never called",
        (
            checklist.R + "test_process.py::test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied",
            checklist.CONF + "test_match_conditions_skip_mirror_pods_and_done_pods_with_the_scheduler_name",
        ),
    ),
    checklist.Item(
        "R25",
        "churn: Volcano Jobs and plain PodGroups across 3 queues, faults at random (CI: 60 s, 60 PodGroups; "
        "VBRIDGE_RELIABILITY_LONG=1: 600 s, 1,200)",
        "every job one terminal state, none lost, no orphan, never below minMember; "
        "p99 admission far below the timeout; RSS flat",
        (checklist.R + "test_churn.py::test_r25_churn_with_random_faults_loses_nothing",),
    ),
    checklist.Item(
        "R26",
        "a backlog of many times its queue (VBRIDGE_BACKLOG_PODS replicas, gang of 100, on 4 nodes) while another "
        "tenant's 2-pod jobs arrive one after another; directly and with 100 ms of latency on our components' link",
        "each canary bound ≤ 5 s; every cycle ≤ 1 s; scheduler < 0.5 core once its queue is full; no pod created "
        "> 2 s after the job's deletion; kube-apiserver < 2 GB",
        (checklist.R + "test_backlog.py::test_r26_a_backlog_never_stalls_another_tenant",),
    ),
    checklist.Item(
        "R27",
        "every watcher we run (scheduler cache through its views, facts, reconcilers, node simulator) across "
        "5 bookmark intervals while pods come and go",
        "0 relists after the first list, 0 dropped streams, every change seen",
        (
            "tests/integration/test_watch_endurance.py::test_every_watcher_crosses_bookmark_intervals_with_no_relist",
            "tests/bridge/k8s/test_watching.py::test_bookmarks_and_normal_ends_resume_without_a_list",
        ),
    ),
    checklist.Item(
        "R28",
        "a Volcano Job nested 1,100 deep in kube-system (and objects that do not fit a view) in a list and in "
        "a watch event",
        "skipped and reported once each; the others handed on and reconciled, and listed by vbridge list",
        (
            "tests/integration/test_watch_undecodable.py::"
            "test_a_follow_skips_a_deep_job_in_its_list_and_in_an_event_and_reports_it_once",
            "tests/integration/test_watch_undecodable.py::"
            "test_the_job_controller_reconciles_other_jobs_while_a_deep_job_exists",
            "tests/bridge/k8s/test_watching.py::"
            "test_an_undecodable_object_is_skipped_and_reported_once_the_rest_handed_on",
            "tests/integration/test_watch_undecodable.py::"
            "test_the_job_lists_show_the_other_jobs_and_warn_of_the_deep_one",
        ),
    ),
    checklist.Item(
        "R29",
        "vbridge translate on a 730-byte YAML alias bomb, /dev/zero (as a file and as stdin), a FIFO nobody "
        "writes to, and a 50 MB file before a good one",
        "a one-line error and exit 1 within 5 s and under 200 MB each; the good input still translated",
        (
            "tests/vbridge/commands/test_translate_limits.py::test_a_yaml_alias_bomb",
            "tests/vbridge/commands/test_translate_limits.py::test_dev_zero_as_a_file_and_as_stdin",
            "tests/vbridge/commands/test_translate_limits.py::test_a_fifo_nobody_writes_to",
            "tests/vbridge/commands/test_translate_limits.py::test_a_50_mb_file_and_the_next_input_is_still_translated",
        ),
    ),
    checklist.Item(
        "R30",
        "a 200-deep Queue chain created from one file, back to back, 10 times",
        "denied 0 times: a parent the webhook's cache lacks is read from the apiserver first",
        ("tests/integration/test_queue_tree.py::test_a_200_deep_chain_from_one_file_is_never_denied",),
    ),
    checklist.Item(
        "R31",
        "a 10,000-replica Volcano Job with a small gang on 4 nodes; one deleted while its gang is being created "
        "(plain, and held by a finalizer)",
        "pods made in waves the cluster can place, not 10,000; no create 2 s after the deletion",
        (
            "tests/integration/test_vcjob_pacing.py::"
            "test_a_huge_job_with_a_small_gang_gets_waves_the_cluster_can_place_not_every_pod",
            "tests/integration/test_vcjob_pacing.py::"
            "test_a_job_deleted_while_its_gang_is_being_created_stops_creating_within_2_s",
        ),
    ),
    checklist.Item(
        "R32",
        "SIGINT or SIGTERM at random moments (start-up, first list, steady state) to list -w, job list -w, "
        "queue list -w, simulate and up (VBRIDGE_SIGINT_TRIES each; CI: 12, 3 for up)",
        "each ends within 1 s with 130 or 143; no child process or work folder left",
        (
            "tests/integration/test_cli_interrupts.py::test_watch_commands_end_within_a_second_of_a_signal_at_any_moment",
            "tests/integration/test_cli_interrupts.py::"
            "test_up_ends_within_a_second_of_a_signal_at_any_moment_and_leaves_no_process",
        ),
    ),
    checklist.Item(
        "R33",
        "explain on the native backend, with and without --backend; a native twin the apiserver refuses "
        "(a PriorityClass that does not exist)",
        "the backend found by itself; the refusal recorded (condition, Event) and explained, not 'waits on "
        "kube-scheduler'",
        (
            "tests/integration/native/test_explain_native.py::"
            "test_explain_finds_the_native_backend_and_the_pods_of_kube_scheduler",
            "tests/integration/native/test_explain_native.py::"
            "test_a_native_twin_the_apiserver_refuses_is_recorded_and_explained",
        ),
    ),
)
