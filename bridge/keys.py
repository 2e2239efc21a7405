"""Annotation, label and scheduling-gate keys: Volcano's, Spark's, the operators', and ours."""

__all__ = [
    "ALLOWED_NAMESPACES",
    "COMMAND_AUTHOR",
    "GROUPED_LABEL",
    "GROUP_NAME",
    "HIERARCHY",
    "HIERARCHY_WEIGHTS",
    "JOBSET_CONTROLLER",
    "KF_JOB_NAME",
    "KF_REPLICA_TYPE",
    "KUEUE_QUEUE",
    "MANAGED_BY",
    "NATIVE_GROUP",
    "NATIVE_SYNCED",
    "OPT_IN_LABEL",
    "PREEMPTABLE",
    "QUEUE_GATE",
    "QUEUE_NAME",
    "SPARK_APP_SELECTOR",
    "SPARK_GATE",
    "SPARK_OPERATOR_APP",
    "SPARK_OPERATOR_LAUNCHED",
    "SPARK_ROLE",
    "STAGES",
    "TASK_SPEC",
    "TEMPLATE_ANNOTATION",
]

GROUP_NAME = "scheduling.k8s.io/group-name"  # the only key Volcano's scheduler reads
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
TASK_SPEC = "volcano.sh/task-spec"
PREEMPTABLE = "volcano.sh/preemptable"
HIERARCHY = "volcano.sh/hierarchy"  # on a Queue, Volcano's older tree form: its path, "root/eng/prod"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"  # ... and the weight of each level on it, "1/2/8"

# Ours.
OPT_IN_LABEL = "vbridge.io/gang-scheduling"  # on a Namespace: "enabled" gang-schedules every Spark app in it
ALLOWED_NAMESPACES = "vbridge.io/allowed-namespaces"  # on a Queue: comma-separated namespace patterns
TEMPLATE_ANNOTATION = "vbridge.io/podgroup-template"  # on a pod or Namespace: a podgroup_templates/ name
MANAGED_BY = "vbridge.io/managed-by"  # label on the PodGroups we create
SPARK_GATE = "vbridge.io/podgroup"  # scheduling gate on a spark-submit driver until its group is complete
# Native backend (kube-scheduler's Workload API places the pods): the scheduling gate on every pod of
# a group until its queue admits the group (our enqueue and proportion decide; kube-scheduler places).
QUEUE_GATE = "vbridge.io/queue"
# Condition on a Volcano PodGroup, written by the native reconciler only while the apiserver
# refuses to create its native twin (a Workload or PodGroup: a PriorityClass that does not
# exist, an admission policy): status False, reason Refused, the apiserver's message.
NATIVE_SYNCED = "NativeGroupSynced"
# Label on pods that were given their group where they were made (a job template we stamped, the
# executors of a Spark driver we admitted): the pod webhooks' objectSelectors skip them, so the
# apiserver does not call us for pods that need nothing.
GROUPED_LABEL = "vbridge.io/grouped"
# On a bus.volcano.sh Command: who made it (the request's userInfo as JSON), written by our admission
# on CREATE and never changed after; the Command controller acts only for what that author may do.
COMMAND_AUTHOR = "vbridge.io/command-author"
# On a PodGroup of a workload whose pods arrive in stages (a JobSet): the stages as JSON, each its
# tasks' pod counts and what releases it (``bridge.adapters.jobset.stages``). The first is the gang.
STAGES = "vbridge.io/stages"
# On the native backend, the native PodGroup a template's pods join when it is not named as their
# Volcano group (a later stage's, ``bridge.native.workloads.stage_group``): the pod webhook reads
# it when an operator dropped ``spec.schedulingGroup`` copying the template.
NATIVE_GROUP = "vbridge.io/native-group"

# Spark (spark-submit) and the spark-operator.
SPARK_APP_SELECTOR = "spark-app-selector"
SPARK_ROLE = "spark-role"
SPARK_OPERATOR_APP = "sparkoperator.k8s.io/app-name"
SPARK_OPERATOR_LAUNCHED = "sparkoperator.k8s.io/launched-by-spark-operator"

# Kubeflow operators.
KF_JOB_NAME = "training.kubeflow.org/job-name"
KF_REPLICA_TYPE = "training.kubeflow.org/replica-type"

# JobSet's and Kueue's.
JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"  # spec.managedBy of the JobSets its controller runs
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"  # a Kueue LocalQueue, never read as a Volcano queue
