"""The policy component: the one shipped in the package, which file a call loads, and the two
calls that need only a policy file, not a ``LoopGuard`` (``replay``, ``versions``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _native
from ._convert import _config_text, _require_str
from ._errors import LoopGuardError

#: The policy component shipped in this package.
DEFAULT_POLICY = Path(__file__).with_name("loopguard_policy.wasm")

PathLike = Union[str, Path]


def _policy_file(policy: Optional[PathLike]) -> str:
    """The policy to load: ``policy``, or the one shipped in the package (which must be there)."""
    if policy is not None:
        return str(policy)
    if not DEFAULT_POLICY.is_file():
        raise LoopGuardError(
            "policy",
            str(DEFAULT_POLICY),
            "the policy shipped in this package is missing; reinstall the loopguard package",
        )
    return str(DEFAULT_POLICY)


def replay(config: Union[str, Mapping[str, Any]], trace: str, *, policy: Optional[PathLike] = None) -> str:
    """Replays a whole trace (JSON Lines) on a fresh gateway; returns the decisions as JSON
    Lines, byte for byte what ``loopguard replay`` prints."""
    return _native.replay(_config_text(config), _require_str(trace, "trace"), _policy_file(policy))


def versions(*, policy: Optional[PathLike] = None) -> dict[str, str]:
    """The policy's version, its interface version and its blake3 digest."""
    version, interface, digest = _native.versions(_policy_file(policy))
    return {"policy": version, "interface": interface, "blake3": digest}
