"""Kubeflow's training jobs: ``family`` holds what TFJob, PyTorchJob, MPIJob, XGBoostJob, PaddleJob
and JAXJob share (stamping replica templates, minMember, minTaskMember, minResources as the
operators compute them); each kind file (``tfjob``, ``pytorchjob``, ``mpijob`` for ``v2beta1``,
``mpijob_v1``, ``xgboostjob``, ``paddlejob``, ``jaxjob``) declares its replica field and ordered
roles, and its own rules (elastic PyTorchJob, MPIJob's launcher and ``WaitForWorkersReady``,
XGBoostJob's one Master, the replica types XGBoostJob, PaddleJob and JAXJob allow); ``pod``
groups operator pods that arrive without their group. All pure.
"""

__all__ = ["family", "jaxjob", "mpijob", "mpijob_v1", "paddlejob", "pod", "pytorchjob", "tfjob", "xgboostjob"]
