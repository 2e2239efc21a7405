"""Kubeflow's training jobs: ``family`` holds what TFJob, PyTorchJob and MPIJob share (stamping
replica templates, minMember, minTaskMember, minResources as the operators compute them); each
kind file (``tfjob``, ``pytorchjob``, ``mpijob`` for ``v2beta1``, ``mpijob_v1``) declares its
replica field and ordered roles, and its own rules (elastic PyTorchJob, MPIJob's launcher and
``WaitForWorkersReady``); ``pod`` groups operator pods that arrive
without their group. All pure.
"""

__all__ = ["family", "mpijob", "mpijob_v1", "pod", "pytorchjob", "tfjob"]
