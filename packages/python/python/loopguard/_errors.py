"""The one error type of the package (imported by the native module to raise it)."""

from __future__ import annotations


class LoopGuardError(Exception):
    """Every failure a caller can act on; ``str()`` is ``<path>: <reason>``.

    ``kind`` is what went wrong: ``config``, ``input``, ``snapshot``, ``too-large`` (the
    policy's own kinds), ``policy`` (the policy file or instance: missing, corrupt, wrong
    interface, wrong digest, trapped) or ``store`` (a shared store that failed while
    ``store_fail_closed`` is set: no decision was made). ``path`` says where (``tools.loopDetection.historySize``,
    ``line 3: args``, ``call.args-json``, a file), ``reason`` what to change.
    """

    def __init__(self, kind: str, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.kind = kind
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return (type(self), (self.kind, self.path, self.reason))
