"""The error hierarchy of volcano-bridge.

Every error the project raises on purpose derives from :class:`BridgeError`, so callers can
catch one type and the command line can print one clear line instead of a traceback::

    BridgeError
    ├── ConfigError            bad input from the user: a file, a flag, a manifest
    │   ├── UsageError             a command line that cannot be read (the CLI exits 2 for it, 1 otherwise)
    │   └── InputError             a file or stdin that cannot be read: too large, no regular file, not YAML
    ├── InvalidObjectError     an object we are asked to admit or translate cannot be used
    │   ├── QuantityError          a malformed resource quantity or Spark memory string
    │   ├── QueueError             the queue does not exist, is not Open, or is not for this namespace
    │   ├── ForbiddenError         its author may not do what it asks (a Command on another's target)
    │   └── UnknownPathError       a review sent to a webhook path this server does not serve
    ├── ControlPlaneError      the local control plane could not start or stop
    │   ├── BinaryMissingError     a Go-built binary is not where it should be
    │   ├── PortInUseError         a port we were told to use is taken
    │   └── StartupError           a process exited or never became ready (carries its log tail)
    ├── ApiError               the kube-apiserver answered with an error status
    └── WaitTimeoutError       what a command waits for (objects gone, a state) did not come in time
"""

from __future__ import annotations

__all__ = [
    "ApiError",
    "BinaryMissingError",
    "BridgeError",
    "ConfigError",
    "ControlPlaneError",
    "ForbiddenError",
    "InputError",
    "InvalidObjectError",
    "PortInUseError",
    "QuantityError",
    "QueueError",
    "StartupError",
    "UnknownPathError",
    "UsageError",
    "WaitTimeoutError",
]


class BridgeError(Exception):
    """Base of every error volcano-bridge raises on purpose."""


class ConfigError(BridgeError):
    """The user's input (a file, a flag, a manifest) cannot be used as given."""


class UsageError(ConfigError):
    """The command line itself is wrong (a malformed argument); ``vbridge`` exits 2, as for argparse's errors."""


class InputError(ConfigError):
    """A user's input cannot be read (``bridge.inputs``): ``where`` is ``FILE[:LINE:COLUMN]``."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where
        self.detail = detail


class InvalidObjectError(BridgeError):
    """An object cannot be admitted or translated as it is; the message says what to change.

    Admission answers it with a denial (HTTP 400 inside the AdmissionReview), never a crash.
    """

    code = 400


class QuantityError(InvalidObjectError):
    """A resource quantity or a Spark memory string is malformed."""


class QueueError(InvalidObjectError):
    """The job's queue does not exist, is not Open, or does not admit the job's namespace."""

    code = 403


class ForbiddenError(InvalidObjectError):
    """The object asks for what its author may not do (a Command on a target they may not change)."""

    code = 403


class UnknownPathError(InvalidObjectError):
    """A review came to a webhook path no adapter serves (a mistyped or stale webhook URL)."""

    code = 404


class ControlPlaneError(BridgeError):
    """The local control plane could not be started, reached or stopped."""


class BinaryMissingError(ControlPlaneError):
    """A Go-built binary is missing; the message says how to build it."""


class PortInUseError(ControlPlaneError):
    """A port the caller asked for is already taken by another process."""


class StartupError(ControlPlaneError):
    """A component exited early or never became ready.

    ``log_tail`` holds the last lines the component wrote, so the cause is visible
    without hunting for log files.
    """

    def __init__(self, message: str, *, log_tail: str = "") -> None:
        super().__init__(message + (f"\n--- last log lines ---\n{log_tail}" if log_tail else ""))
        self.log_tail = log_tail


class ApiError(BridgeError):
    """The kube-apiserver answered a request with an error status."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class WaitTimeoutError(BridgeError):
    """What a command waits for did not happen within its timeout (the message names what is left)."""
