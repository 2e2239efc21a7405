"""Every item of the reliability checklist (R1–R25) and of the security checklist (S1–S13), one row each.

A row names the tests that show it: this suite's own (``tests/reliability/``) or tests elsewhere
that already cover the item. The table printed at the end of a session (``conftest.py``) takes
each row's outcome from those tests' reports in the same session. A row no test can show here
says why in ``not_here``; one this suite does not cover yet says what is missing (TODO).
``tests/reliability/test_catalogue.py`` checks that every named test exists and that every item
has a row.
"""

from __future__ import annotations

import dataclasses

__all__ = ["ITEMS", "Item", "by_test"]

R = "tests/reliability/"
ADM = "tests/webhooks/test_admission.py::"
SRV = "tests/webhooks/test_server.py::"
LIM = "tests/webhooks/test_limits.py::"
CONF = "tests/webhooks/test_configuration.py::"
VAL = "tests/charts/test_values.py::"
HELM = "tests/integration/test_helm_install.py::"
SCHED = "tests/integration/scheduler/"


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    done: str  # what the tests do
    expected: str
    tests: tuple[str, ...] = ()  # pytest node ids, from the repository root
    not_here: str = ""  # why it cannot be tested on this machine (then ``tests`` may be empty)
    missing: str = ""  # what this suite does not do yet for the item (its row says so: TODO)


ITEMS: tuple[Item, ...] = (
    Item(
        "R1",
        "review a job, apply the patch, review the patched object again",
        "empty second patch; one PodGroup",
        (
            ADM + "test_mutation_is_a_json_patch_that_applies_and_is_idempotent",
            R + "test_fuzz.py::test_r1_r8_reviews_are_idempotent_and_reinvocation_safe",
        ),
    ),
    Item(
        "R2",
        "dryRun=true create of a job through the apiserver",
        "patch returned; nothing created",
        ("tests/integration/test_webhooks.py::test_dry_run_creates_nothing_and_foreign_queue_is_denied",),
    ),
    Item(
        "R3",
        "webhook server stopped (registration left in place): pods (Ignore), a Volcano Job (Fail), kube-system",
        "Ignore: pod admitted; Fail: clear error within timeoutSeconds; kube-system unaffected",
        (R + "test_process.py::test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied",),
    ),
    Item(
        "R4",
        "webhook pods rolled by helm upgrade; own namespace excluded in the configuration",
        "recreated, no deadlock",
        (
            CONF + "test_excluded_namespaces_are_left_out_sorted_and_once",
            HELM + "test_upgrade_with_changed_values_rolls_and_keeps_every_custom_resource",
        ),
    ),
    Item(
        "R5",
        "malformed objects and reviews (null containers, no executor, unknown apiVersion, fuzzed)",
        "a warning or a clean denial with status; never a crash",
        (
            ADM + "test_malformed_reviews_are_denied_not_raised",
            ADM + "test_bad_objects_are_denied_with_a_message",
            R + "test_fuzz.py::test_s6_generated_reviews_of_every_kind_get_a_valid_answer",
        ),
    ),
    Item(
        "R6",
        "body over 3 MiB, forged Content-Length (short and long), huge arrays and strings",
        "rejected before the full read; memory bounded",
        (
            SRV + "test_body_over_3_mib_is_refused_on_bytes_read",
            R + "test_fuzz.py::test_r6_s5_hostile_bodies_over_tls_get_answers_and_bounded_memory",
        ),
    ),
    Item(
        "R7",
        "spark-submit driver creates executors after its PodGroup exists",
        "executors join the group; minMember not double-counted",
        (
            "tests/integration/test_webhooks.py::test_spark_submit_driver_is_gated_until_its_group_is_complete",
            "tests/integration/test_spark_submit_client.py::test_spark_submit_client_mode_executors_are_grouped_admitted_and_bound",
        ),
    ),
    Item(
        "R8",
        "reviewed again after another webhook added a container (reinvocation)",
        "same result; nothing duplicated",
        (R + "test_fuzz.py::test_r1_r8_reviews_are_idempotent_and_reinvocation_safe",),
    ),
    Item(
        "R9",
        "gang of N where only N-1 fit; one of 10,000 pods on 440 slots, a small gang created meanwhile",
        "nothing bound; Unschedulable/NotEnoughResources event; cycles do not wait for its status writes; "
        "the small gang binds within seconds",
        (
            SCHED + "test_gangs.py::test_gang_that_does_not_fit_binds_nothing_and_says_why",
            SCHED + "test_backlog.py::test_an_unplaceable_10000_pod_gang_neither_holds_a_cycle_nor_a_small_gang",
        ),
    ),
    Item(
        "R10",
        "binds over reset, black-holed, cut, slow (latency, 16 KB/s, slow close) connections; chosen binds, "
        "status writes and reconciler creates answered 500, 409, 429 (with and without Retry-After)",
        "failure recorded (FailedScheduling, PodScheduled=False), retried; gang completes; cache matches the API",
        (
            R + "test_network.py::test_reset_peer_and_timeouts_on_every_component_connection",
            R + "test_network.py::test_degraded_links_slow_everything_and_lose_nothing",
            R + "test_calls.py::test_r10_chosen_calls_answered_500_409_429",
            SCHED + "test_status_writer.py::test_a_write_whose_object_changed_meanwhile_is_dropped_and_decided_again",
        ),
    ),
    Item(
        "R11",
        "another writer binds a member to the same node just before our bind (409 already assigned)",
        "success when the node matches; no FailedScheduling",
        (
            SCHED + "test_restarts.py::test_killed_mid_gang_leaves_no_partial_gang_and_no_double_bind",
            R + "test_calls.py::test_r11_a_member_bound_by_another_writer_just_before_the_schedulers_bind",
        ),
    ),
    Item(
        "R12",
        "scheduler process SIGKILLed during a gang's binds, in a loop",
        "0 partial gangs, 0 double binds (counted from the apiserver)",
        (
            SCHED + "test_restarts.py::test_killed_mid_gang_leaves_no_partial_gang_and_no_double_bind",
            R + "test_process.py::test_r12_scheduler_sigkilled_mid_binds_in_a_loop",
        ),
    ),
    Item(
        "R13",
        "minMember raised while the gang is pending",
        "new minMember applied; no partial bind",
        (R + "test_cluster.py::test_r13_min_member_raised_while_the_gang_is_pending",),
    ),
    Item(
        "R14",
        "another writer rewrites a PodGroup's status while the scheduler owns it",
        "re-GET and reapply: the scheduler's status converges",
        (R + "test_calls.py::test_r14_a_podgroup_status_rewritten_by_another_writer_converges",),
    ),
    Item(
        "R15",
        "apiserver restarted: its new watch cache answers 410 to the components' old resourceVersions",
        "relist; no replayed event (no pod created or bound twice)",
        (
            "tests/bridge/k8s/test_watching.py::test_relist_reports_changed_and_vanished_objects_only",
            R + "test_process.py::test_r15_r16_apiserver_down_60_s_then_back",
        ),
    ),
    Item(
        "R16",
        "kube-apiserver stopped for 60 s, then started again",
        "backoff, readiness false, recovery without a restart",
        (
            R + "test_process.py::test_r15_r16_apiserver_down_60_s_then_back",
            R + "test_process.py::test_etcd_restarted_under_the_components",
        ),
    ),
    Item(
        "R17",
        "leader killed with 2 replicas (scheduler lease; controllers SIGKILLed mid-reconcile)",
        "takeover within lease time; nothing done twice",
        (
            SCHED + "test_restarts.py::test_leader_election_one_leader_then_handover",
            "tests/integration/test_controllers_ha.py::test_one_leader_reconciles_and_a_killed_leader_is_replaced_without_doing_anything_twice",
        ),
    ),
    Item(
        "R18",
        "queue closed (as vcctl queue close) while its groups are pending and running",
        "new groups held or rejected; running ones continue",
        (
            ADM + "test_queue_denial_is_403_naming_the_queues_to_use",
            R + "test_cluster.py::test_r18_queue_closed_under_pending_and_running_groups",
        ),
    ),
    Item(
        "R19",
        "preemption and reclaim under contention",
        "only within policy; gangs evicted whole or kept whole",
        (
            SCHED + "test_sharing.py::test_preemption_evicts_for_a_whole_gang_or_not_at_all",
            SCHED + "test_sharing.py::test_reclaim_takes_back_a_share_for_a_whole_gang",
        ),
    ),
    Item(
        "R20",
        "a running gang's member pod deleted (PodEvicted -> RestartJob)",
        "PodGroup stays admitted while it terminates (Running, Unknown as Volcano's getPodGroupPhase, Inqueue while "
        "restarting; never Pending); the job's lifecycle policy applies once",
        (
            "tests/integration/test_vcjobs.py::test_tensorflow_seed_restarts_on_eviction_then_completes_with_its_workers",
            R + "test_cluster.py::test_r20_a_running_gangs_member_deleted",
        ),
    ),
    Item(
        "R21",
        "the node under a running Volcano Job lost (its kubelet stopped, its Node deleted)",
        "the job's policy (RestartJob) applies; the gang runs again elsewhere; no reservation leaks",
        (R + "test_cluster.py::test_r21_the_node_under_a_running_volcano_job_deleted",),
    ),
    Item(
        "R22",
        "serving certificate and CA renewed under load; the caBundle re-injected; a swapped file served",
        "reloaded and re-injected without manual action",
        (
            "tests/integration/test_cert_rotation.py::test_managed_certificate_rotates_under_load_without_a_failed_admission",
            SRV + "test_a_certificate_swapped_on_disk_is_served_to_new_connections",
        ),
    ),
    Item(
        "R23",
        "helm upgrade of the installed chart (templated CRDs, changed values)",
        "CRDs updated; custom resources kept",
        (HELM + "test_upgrade_with_changed_values_rolls_and_keeps_every_custom_resource",),
    ),
    Item(
        "R24",
        "kube-system jobs and mirror pods while the webhook is down; the configuration's selectors",
        "webhook never called",
        (
            R + "test_process.py::test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied",
            CONF + "test_match_conditions_skip_mirror_pods_and_done_pods_with_the_scheduler_name",
        ),
    ),
    Item(
        "R25",
        "churn: Volcano Jobs and plain PodGroups across 3 queues, faults at random (CI: 60 s, 60 PodGroups; "
        "VBRIDGE_RELIABILITY_LONG=1: 600 s, 1,200)",
        "every job one terminal state, none lost, no orphan, never below minMember; "
        "p99 admission far below the timeout; RSS flat",
        (R + "test_churn.py::test_r25_churn_with_random_faults_loses_nothing",),
    ),
    Item(
        "S1",
        "the chart's scheduler role against system:kube-scheduler; can-i matrix; every granted verb used",
        "no CRD, configmap or secret writes",
        (
            VAL + "test_least_privilege_per_component",
            HELM + "test_each_component_lacks_the_others_rights",
            HELM + "test_every_granted_verb_was_used_or_has_a_named_code_path",
        ),
    ),
    Item(
        "S2",
        "the webhook ServiceAccount's rights; webhook configuration scoped by resourceNames",
        "no pod writes; update limited by name",
        (
            VAL + "test_least_privilege_per_component",
            VAL + "test_self_mode_scopes_the_cert_secret_and_webhook_configuration_by_name",
        ),
    ),
    Item(
        "S3",
        "where Secrets and Leases are granted",
        "namespaced Roles only",
        (
            VAL + "test_every_service_account_is_bound_only_to_its_own_roles",
            VAL + "test_self_mode_scopes_the_cert_secret_and_webhook_configuration_by_name",
        ),
    ),
    Item(
        "S4",
        "serving certificate names, rotation, TLS versions and ciphers",
        "valid for svc.ns.svc; rotated automatically; TLS >= 1.2, AEAD only",
        (
            "tests/bridge/test_certs.py::test_ca_and_serving_pair_with_service_names_and_validity",
            "tests/integration/test_cert_rotation.py::test_managed_certificate_rotates_under_load_without_a_failed_admission",
            LIM + "test_old_protocols_and_non_aead_ciphers_are_refused",
        ),
    ),
    Item(
        "S5",
        "body cap on bytes read; header and body timeouts (slow-loris); connection cap",
        "enforced; memory bounded",
        (
            SRV + "test_body_over_3_mib_is_refused_on_bytes_read",
            LIM + "test_a_partial_head_is_disconnected_after_the_header_timeout",
            LIM + "test_the_connection_cap_refuses_new_connections_and_keeps_open_ones",
            R + "test_fuzz.py::test_r6_s5_hostile_bodies_over_tls_get_answers_and_bounded_memory",
        ),
    ),
    Item(
        "S6",
        "generated AdmissionReviews per kind (3,000 in CI, 100,000 with VBRIDGE_RELIABILITY_LONG=1) through the "
        "webhook's HTTP handler in-process (valid objects with "
        "1-4 hostile mutations: wrong JSON types, huge numbers and strings, deep nesting, absurd quantities, "
        "members deleted or added; CREATE, UPDATE with a mutated oldObject, DELETE; garbled bytes), plus raw bytes",
        "a valid AdmissionReview answer for every request; none an internal error (an unexpected exception)",
        (
            R + "test_fuzz.py::test_s6_generated_reviews_of_every_kind_get_a_valid_answer",
            R + "test_fuzz.py::test_s6_raw_bytes_and_deep_nesting_get_a_valid_answer",
        ),
    ),
    Item(
        "S7",
        "queue authorised from the namespace (allowed-namespaces) at admission; default queue closable",
        "denied with the queues the namespace may use",
        (
            ADM + "test_queue_denial_is_403_naming_the_queues_to_use",
            "tests/integration/test_webhooks.py::test_dry_run_creates_nothing_and_foreign_queue_is_denied",
        ),
    ),
    Item(
        "S8",
        "queue-name and group values validated (exists, Open, leaf); objectSelector labels never grant anything",
        "denial naming the problem",
        (
            ADM + "test_queue_denial_is_403_naming_the_queues_to_use",
            "tests/integration/test_vcjob_faults.py::test_root_and_jobs_of_absurd_size_are_denied",
            CONF + "test_pod_webhooks_select_their_labels_and_skip_grouped_pods",
        ),
    ),
    Item(
        "S9",
        "a job carrying a deletionTimestamp reviewed",
        "not skipped: the same answer as without it",
        (R + "test_fuzz.py::test_s9_objects_with_a_deletion_timestamp_are_not_skipped",),
    ),
    Item(
        "S10",
        "every chart pod under PSS restricted, read-only root, no added capabilities",
        "admitted under restricted; runs Ready",
        (
            VAL + "test_every_pod_runs_restricted",
            "tests/charts/test_chart.py::test_every_pod_is_admitted_under_pss_restricted",
            HELM + "test_install_runs_every_pod_ready_under_restricted_pod_security",
        ),
    ),
    Item(
        "S11",
        "NetworkPolicy for the webhook and metrics ports",
        "webhook port open only to the apiserver, metrics only to Prometheus",
        not_here="the chart ships no NetworkPolicy yet, and this test bed has no CNI that enforces one "
        "(no kube-proxy, pods share the host network)",
    ),
    Item(
        "S12",
        "own namespace and kube-system excluded from every webhook",
        "excluded in the generated configuration; a kube-system job passes with the webhook down",
        (
            CONF + "test_excluded_namespaces_are_left_out_sorted_and_once",
            R + "test_process.py::test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied",
        ),
    ),
    Item(
        "S13",
        "image pinned by digest; SBOM and vulnerability scan",
        "in CI",
        ("tests/image/test_image.py::test_holds_runtime_dependencies_only",),
        not_here="no registry to pin a digest against and no scanner database offline; the image test checks "
        "only that it holds runtime dependencies",
    ),
)


def by_test() -> dict[str, list[str]]:
    """Node id -> the ids of the items it shows."""
    out: dict[str, list[str]] = {}
    for item in ITEMS:
        for test in item.tests:
            out.setdefault(test, []).append(item.id)
    return out
