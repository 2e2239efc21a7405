"""The only layer that talks HTTP to a kube-apiserver.

``kubeconfigs`` reads and writes kubeconfig files (pure, apart from file access).
``paths`` builds REST paths (pure). ``client`` is an async httpx client with one request
function that maps every error status to :class:`bridge.errors.ApiError`; ``watching`` is a
list-then-watch loop that relists on 410 Gone without replaying old events.
"""

__all__ = ["client", "kubeconfigs", "paths", "watching"]
