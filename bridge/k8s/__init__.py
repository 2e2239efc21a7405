"""The only layer that talks HTTP to a kube-apiserver.

``kubeconfigs`` finds the connection every command uses, as kubectl finds it (``--kubeconfig``,
``$KUBECONFIG``, ``~/.kube/config``, the pod's service account), and writes the kubeconfig of a
local cluster (pure, apart from file access). ``paths`` builds REST paths (pure). ``client`` is
an async aiohttp client with one request function that maps every error status to
:class:`bridge.errors.ApiError`; ``watching`` is a list-then-watch loop that resumes from its
resourceVersion and lists again only on 410 Gone, without replaying old events; ``views`` decodes
lists and watch events through a shape (only the members a consumer reads); ``salvage`` takes apart
a list or an event holding one object that cannot be decoded (pure), so that only that one is
skipped. ``writes`` holds the writes that may be repeated (create or
replace, delete what may be gone). ``events`` sends Kubernetes Events about the objects we act
on; ``lease`` is leader election on a Lease, as client-go's; ``owners`` the ServiceAccount that
owns what our components make at run time; ``backends`` resolves ``--backend`` against the
cluster (``volcano`` or ``native``).
"""

__all__ = [
    "backends",
    "client",
    "events",
    "kubeconfigs",
    "lease",
    "owners",
    "paths",
    "salvage",
    "views",
    "watching",
    "writes",
]
