"""Simulated nodes: the kubelet's visible behaviour without containers.

``nodes`` and ``podstatus`` are pure: they build Node bodies and pod status bodies.
``simulator`` does the I/O: it registers the nodes, keeps them Ready, moves pods bound to
them to Running (with a pod IP), to Succeeded or Failed when the pod's annotations
``sim.vbridge.io/run-seconds`` and ``sim.vbridge.io/exit-code`` (or the simulator's default
run time) say so, and finishes deleting terminating pods, as a kubelet would.

Opt-in, ``runtime`` runs some pods for real: those whose images are ours, on the nodes its
``Config`` names (labelled ``sim.vbridge.io/runtime=process``). Each container is a local
process (``procs``) in the node's network namespace and a private mount namespace whose root
(``rootfs``) has the pod's volumes (``volumes``, written by ``atomicdir``) at their mountPaths;
``envvars`` builds its environment, ``containers`` decides restarts, probes and status, and
``relay`` makes the apiserver reachable from inside the namespace. The pure modules are
``nodes``, ``podstatus``, ``envvars``, ``volumes``, ``rootfs`` and ``containers``.
"""

__all__ = [
    "atomicdir",
    "containers",
    "envvars",
    "nodes",
    "podstatus",
    "procs",
    "relay",
    "rootfs",
    "runtime",
    "simulator",
    "volumes",
]

RUN_SECONDS = "sim.vbridge.io/run-seconds"
EXIT_CODE = "sim.vbridge.io/exit-code"
SIMULATED_LABEL = "sim.vbridge.io/simulated"

# The runtime (``runtime``): which pods run for real, and the kubelet-like tunables. These
# belong in bridge.defaults; they are here until that module takes them.
RUNTIME_LABEL = "sim.vbridge.io/runtime"  # on nodes whose pods run as local processes: "process"
