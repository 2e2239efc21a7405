"""The security checklist's rows (S1–S13), and those our own issues added (S14 on)."""

from __future__ import annotations

from tests.reliability import checklist

__all__ = ["ITEMS"]

ITEMS: tuple[checklist.Item, ...] = (
    checklist.Item(
        "S1",
        "the chart's scheduler role against system:kube-scheduler; can-i matrix; every granted verb used",
        "no CRD, configmap or secret writes",
        (
            checklist.VAL + "test_least_privilege_per_component",
            checklist.HELM + "test_each_component_lacks_the_others_rights",
            checklist.HELM + "test_every_granted_verb_was_used_or_has_a_named_code_path",
        ),
    ),
    checklist.Item(
        "S2",
        "the webhook ServiceAccount's rights; webhook configuration scoped by resourceNames",
        "no pod writes; update limited by name",
        (
            checklist.VAL + "test_least_privilege_per_component",
            checklist.VAL + "test_self_mode_scopes_the_cert_secret_and_webhook_configuration_by_name",
        ),
    ),
    checklist.Item(
        "S3",
        "where Secrets and Leases are granted",
        "namespaced Roles only",
        (
            checklist.VAL + "test_every_service_account_is_bound_only_to_its_own_roles",
            checklist.VAL + "test_self_mode_scopes_the_cert_secret_and_webhook_configuration_by_name",
        ),
    ),
    checklist.Item(
        "S4",
        "serving certificate names, rotation, TLS versions and ciphers",
        "valid for svc.ns.svc; rotated automatically; TLS >= 1.2, AEAD only",
        (
            "tests/bridge/test_certs.py::test_ca_and_serving_pair_with_service_names_and_validity",
            "tests/integration/test_cert_rotation.py::test_managed_certificate_rotates_under_load_without_a_failed_admission",
            checklist.LIM + "test_old_protocols_and_non_aead_ciphers_are_refused",
        ),
    ),
    checklist.Item(
        "S5",
        "body cap on bytes read; header and body timeouts (slow-loris); connection pools: 1,000 silent raw "
        "connections held (from the apiserver's address, --client-ca on) while jobs are created through it",
        "enforced; memory bounded; every create mutated (a silent client cannot fill a pool)",
        (
            checklist.SRV + "test_body_over_3_mib_is_refused_on_bytes_read",
            checklist.LIM + "test_a_partial_head_is_disconnected_after_the_header_timeout",
            checklist.LIM + "test_silent_connections_cannot_fill_the_server",
            checklist.LIM + "test_when_every_held_connection_is_in_a_request_a_new_request_is_answered_503",
            "tests/integration/test_webhook_flood.py::test_a_thousand_silent_connections_do_not_keep_the_apiserver_out",
            checklist.R + "test_fuzz.py::test_r6_s5_hostile_bodies_over_tls_get_answers_and_bounded_memory",
        ),
    ),
    checklist.Item(
        "S6",
        "generated AdmissionReviews per kind (3,000 in CI, 100,000 with VBRIDGE_RELIABILITY_LONG=1) through the "
        "webhook's HTTP handler in-process (valid objects with "
        "1-4 hostile mutations: wrong JSON types, huge numbers and strings, deep nesting, absurd quantities, "
        "members deleted or added; CREATE, UPDATE with a mutated oldObject, DELETE; garbled bytes), plus raw bytes",
        "a valid AdmissionReview answer for every request; none an internal error (an unexpected exception)",
        (
            checklist.R + "test_fuzz.py::test_s6_generated_reviews_of_every_kind_get_a_valid_answer",
            checklist.R + "test_fuzz.py::test_s6_raw_bytes_and_deep_nesting_get_a_valid_answer",
        ),
    ),
    checklist.Item(
        "S7",
        "queue authorised from the namespace (allowed-namespaces) at admission; default queue closable, "
        "and only by who may update it: a namespace editor's bus Command against a queue or another "
        "namespace's Job, and one with no author recorded by admission",
        "denied with the queues the namespace may use; the Command refused (Event, deleted), its target "
        "untouched; the editor's Command on their own Job carried out",
        (
            checklist.ADM + "test_queue_denial_is_403_naming_the_queues_to_use",
            "tests/integration/test_webhooks.py::test_dry_run_creates_nothing_and_foreign_queue_is_denied",
            checklist.BUS + "test_an_editors_command_against_a_queue_is_refused",
            checklist.BUS + "test_an_editors_command_against_another_namespaces_job_is_refused",
            checklist.BUS + "test_an_editor_still_aborts_their_own_job",
            checklist.BUS + "test_a_command_without_a_recorded_author_is_refused",
        ),
    ),
    checklist.Item(
        "S8",
        "queue-name and group values validated (exists, Open, leaf); objectSelector labels never grant anything; "
        "every template quantity of every kind out of apimachinery's range (1e-999999999, 1e999999999, 1E-30, "
        "5,000 digits) on CREATE and UPDATE; a 200-deep queue chain POSTed back to back, 10 times",
        "denial naming the problem (the field path); the chain denied 0 times",
        (
            checklist.ADM + "test_queue_denial_is_403_naming_the_queues_to_use",
            "tests/integration/test_vcjob_faults.py::test_root_and_jobs_of_absurd_size_are_denied",
            checklist.CONF + "test_pod_webhooks_select_their_labels_and_skip_grouped_pods",
            "tests/webhooks/test_admission_quantities.py::test_an_out_of_range_value_is_denied_naming_its_field",
            "tests/integration/test_template_quantities.py::test_out_of_range_template_quantities_are_denied",
            "tests/integration/test_queue_tree.py::test_a_200_deep_chain_from_one_file_is_never_denied",
        ),
    ),
    checklist.Item(
        "S9",
        "a job carrying a deletionTimestamp reviewed",
        "not skipped: the same answer as without it",
        (checklist.R + "test_fuzz.py::test_s9_objects_with_a_deletion_timestamp_are_not_skipped",),
    ),
    checklist.Item(
        "S10",
        "every chart pod under PSS restricted, read-only root, no added capabilities",
        "admitted under restricted; runs Ready",
        (
            checklist.VAL + "test_every_pod_runs_restricted",
            "tests/charts/test_chart.py::test_every_pod_is_admitted_under_pss_restricted",
            checklist.HELM + "test_install_runs_every_pod_ready_under_restricted_pod_security",
        ),
    ),
    checklist.Item(
        "S11",
        "NetworkPolicy for the webhook and metrics ports",
        "webhook port open only to the apiserver, metrics only to Prometheus",
        not_here="the chart ships no NetworkPolicy yet, and this test bed has no CNI that enforces one "
        "(no kube-proxy, pods share the host network)",
    ),
    checklist.Item(
        "S12",
        "own namespace and kube-system excluded from every webhook",
        "excluded in the generated configuration; a kube-system job passes with the webhook down",
        (
            checklist.CONF + "test_excluded_namespaces_are_left_out_sorted_and_once",
            checklist.R + "test_process.py::test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied",
        ),
    ),
    checklist.Item(
        "S13",
        "image pinned by digest; SBOM and vulnerability scan",
        "in CI",
        ("tests/image/test_image.py::test_holds_runtime_dependencies_only",),
        not_here="no registry to pin a digest against and no scanner database offline; the image test checks "
        "only that it holds runtime dependencies",
    ),
    checklist.Item(
        "S14",
        "bus.volcano.sh Commands by a namespace editor (impersonated): against a Queue, against another "
        "namespace's job; one with no recorded author; an editor's own job",
        "refused with an Event and deleted, nothing done; the editor's own job still aborted",
        (
            "tests/integration/test_bus_authority.py::test_an_editors_command_against_a_queue_is_refused",
            "tests/integration/test_bus_authority.py::"
            "test_an_editors_command_against_another_namespaces_job_is_refused",
            "tests/integration/test_bus_authority.py::test_a_command_without_a_recorded_author_is_refused",
            "tests/integration/test_bus_authority.py::test_an_editor_still_aborts_their_own_job",
        ),
    ),
    checklist.Item(
        "S15",
        "1e-999999999, 1e999999999, 1E-30, 8Ei and over-long quantities in every template of every kind, on "
        "CREATE and UPDATE",
        "denied naming the field; the sane value admitted",
        (
            "tests/webhooks/test_admission_quantities.py::test_an_out_of_range_value_is_denied_naming_its_field",
            "tests/webhooks/test_admission_quantities.py::test_every_kind_that_holds_quantities_is_covered",
            "tests/integration/test_template_quantities.py::test_out_of_range_template_quantities_are_denied",
        ),
    ),
    checklist.Item(
        "S16",
        "1,000 raw connections to the webhook that never send a byte, reopened as they are closed, while jobs are "
        "created through it (client certificates required)",
        "every create mutated; silent connections closed from accept, never filling the server",
        ("tests/integration/test_webhook_flood.py::test_a_thousand_silent_connections_do_not_keep_the_apiserver_out",),
    ),
    checklist.Item(
        "S17",
        "a namespace editor (impersonated) lifts vbridge.io/queue and vbridge.io/podgroup, reroutes a gated pod "
        "(group and queue annotations) and touches spec.schedulingGroup, on both backends, webhook up and down",
        "refused every time by the ValidatingAdmissionPolicy; our scheduler and controllers still lift the gates",
        (
            "tests/integration/native/test_gate_policy.py::"
            "test_an_editor_cannot_lift_the_queue_gate_and_our_scheduler_still_does",
            "tests/integration/native/test_gate_policy.py::test_an_editor_cannot_lift_the_spark_driver_gates",
            "tests/integration/native/test_gate_policy.py::"
            "test_an_editor_cannot_join_a_pod_of_theirs_to_a_native_group",
            "tests/integration/test_gate_policy.py::"
            "test_an_editor_cannot_lift_the_spark_driver_gate_and_our_controllers_still_do",
        ),
    ),
)
