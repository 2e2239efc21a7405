"""Simulated nodes: the kubelet's visible behaviour without containers.

``nodes`` and ``podstatus`` are pure: they build Node bodies and pod status bodies.
``simulator`` does the I/O: it registers the nodes, keeps them Ready, moves pods bound to
them to Running (with a pod IP), to Succeeded or Failed when the pod's annotations
``sim.vbridge.io/run-seconds`` and ``sim.vbridge.io/exit-code`` (or the simulator's default
run time) say so, and finishes deleting terminating pods, as a kubelet would.
"""

__all__ = ["nodes", "podstatus", "simulator"]

RUN_SECONDS = "sim.vbridge.io/run-seconds"
EXIT_CODE = "sim.vbridge.io/exit-code"
SIMULATED_LABEL = "sim.vbridge.io/simulated"
