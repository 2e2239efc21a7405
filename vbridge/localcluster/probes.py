"""HTTP probes of processes on loopback: the standard library's client, never a proxy.

A probe is a yes/no question asked every 0.1-0.2 s while something starts, so any failure to
connect or to read an answer is "not yet", never an exception.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import urllib.error
import urllib.request

__all__ = ["http_ok", "port_free", "routed", "status"]


def _unverified() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def status(
    url: str, *, method: str = "GET", body: bytes | None = None, verify: ssl.SSLContext | bool = True, timeout: float
) -> int | None:
    """The HTTP status ``url`` answers with now, or None when it does not answer."""
    if isinstance(verify, ssl.SSLContext):
        context = verify
    else:
        context = ssl.create_default_context() if verify else _unverified()
    # ProxyHandler({}): a loopback probe never goes through $HTTP_PROXY/$HTTPS_PROXY.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context))
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, http.client.HTTPException):  # URLError, refused, reset, timed out, bad status line
        return None


def http_ok(url: str, *, verify: ssl.SSLContext | bool = True, timeout: float = 1.0) -> bool:
    """A readiness probe: does ``url`` answer 200 now?"""
    return status(url, verify=verify, timeout=timeout) == 200


def routed(url: str, *, timeout: float = 1.0) -> bool:
    """Is a handler registered at ``url`` (any answer but 404 to an empty JSON POST)? Not verified:
    only whether the path is routed yet matters."""
    answer = status(url, method="POST", body=b"{}", verify=False, timeout=timeout)
    return answer is not None and answer != 404


def port_free(port: int) -> bool:
    """Can we bind ``port`` on every address right now?"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True
