"""Metrics through the OpenTelemetry API: the instruments of docs/METRICS.md, the same names and
attributes as the CLI's Prometheus text, so one dashboard reads every host.

Why optional and why looked up this way: most applications have no OpenTelemetry, and a loop
guard must not make them import it or pay for it. A ``LoopGuard`` records only when it is given
a ``meter_provider``, or when the application has already imported OpenTelemetry's metrics API
(``opentelemetry.metrics`` in ``sys.modules``: then its global provider is used, and a provider
set later is picked up by the API's own proxy). Otherwise nothing is imported and the decision
path makes one ``is None`` test.

What is counted where: the native guard counts each decision as the policy answered it (kind,
action, detector: ``decision_counts()``, a fixed array of atomic counters in Rust, bounded to the
lists below), and the ``loopguard.decisions`` counter reports those counts when the SDK collects;
one decision in ``DURATION_SAMPLE`` is timed here on ``loopguard.decision.duration``; the policy
and store counters are the guard's own ``health()``, read at collection too (observable
counters). Why so little per decision in Python: a dict update under a lock cost about a
microsecond per decision, 5% of one (docs/PERFORMANCE.md); what is left is a counter test.
Attribute values come from fixed lists (anything else is ``other``), so the number of series is
bounded whatever the traffic.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Callable, Iterable, Optional

#: Seconds, the CLI's buckets (``loopguard_host::metrics::LATENCY_BUCKETS``): an in-process decision
#: takes tens of microseconds, a stored one a round trip. The label values are bounded by the
#: native counter (the same lists as the CLI's), so none are listed here.
BUCKETS = (0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1.0)
#: One decision in this many is timed on the histogram. Why: the SDK's ``Histogram.record`` costs
#: 10-35 µs (attribute cleaning and hashing, exemplars), about a decision; one in 256 keeps the
#: metrics under 5% of a decision (docs/PERFORMANCE.md) and the quantiles unbiased. The
#: histogram's count is therefore not a decision count: ``loopguard.decisions`` is.
DURATION_SAMPLE = 256
#: The policy counters: instrument, health() key(s) summed, description.
_POLICY = (
    ("loopguard.policy.swaps", ("swaps",), "Policy versions swapped in"),
    ("loopguard.policy.traps", ("traps", "oom"), "Policy calls that trapped or ran out of memory"),
    ("loopguard.policy.timeouts", ("timeouts",), "Policy calls stopped at their deadline"),
    ("loopguard.policy.recoveries", ("recoveries",), "Broken policy instances replaced"),
)



class Recorder:
    """The instruments of one meter provider, shared by every guard that records on it."""

    def __init__(self, meter: Any) -> None:
        from opentelemetry.metrics import Observation  # only when OpenTelemetry is in use

        self._observation = Observation
        # Counted by the native guard and reported at collection: the SDK's own add() costs
        # ~10 µs a measurement (attribute cleaning and hashing), a fifth of a decision.
        meter.create_observable_counter(
            "loopguard.decisions", [self._decisions], unit="{decision}",
            description="Decisions by host, kind, action and detector")
        try:
            self.duration = meter.create_histogram(
                "loopguard.decision.duration", unit="s", description="Time to a decision, as the host waited for it",
                explicit_bucket_boundaries_advisory=list(BUCKETS))
        except TypeError:  # an API before 1.23 has no advisory: the SDK's default buckets
            self.duration = meter.create_histogram(
                "loopguard.decision.duration", unit="s", description="Time to a decision, as the host waited for it")
        # The guards whose health() is read at collection; weak, so a closed guard goes away.
        self.guards: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._decided = 0
        # Closed guards' decisions, so that a counter never goes back (LiteLLM makes guards per
        # worker; a test or an application may close one): by (host, kind, action, detector).
        self.retired: dict[tuple[str, str, str, str], int] = {}
        for name, keys, description in _POLICY:
            meter.create_observable_counter(name, [self._observe(lambda h, keys=keys: sum(h.get(k, 0) for k in keys))],
                                            unit="{event}", description=description)
        meter.create_observable_counter(
            "loopguard.store.decisions", [self._store_decisions], unit="{decision}",
            description="Stored decisions by where they were made: store, local, refused")
        meter.create_observable_counter(
            "loopguard.store.cas_retries", [self._observe(lambda h: h.get("store_cas_retries"))], unit="{retry}",
            description="Compare-and-set conflicts retried")
        meter.create_observable_counter(
            "loopguard.store.fallback_episodes", [self._observe(lambda h: h.get("store_episodes"))], unit="{episode}",
            description="Store failure episodes begun")

    def due(self) -> bool:
        """Whether this decision is one of those timed (one in ``DURATION_SAMPLE``). Two threads may
        count one tick twice: a sampling rate, not a count."""
        self._decided += 1
        return self._decided % DURATION_SAMPLE == 0

    def timed(self, host: str, kind: str, seconds: float) -> None:
        self.duration.record(seconds, {"host": host, "kind": kind})  # kind: the guard's own constant

    def retire(self, guard: Any) -> None:
        """Keeps a guard's decision counts before it is closed."""
        for key, n in self._counts(guard).items():
            self.retired[key] = self.retired.get(key, 0) + n

    @staticmethod
    def _counts(guard: Any) -> dict[tuple[str, str, str, str], int]:
        try:
            counts = guard._live().decision_counts()
        except Exception:  # a guard closed meanwhile has no counters any more
            return {}
        return {(guard._metrics_host, kind, action, detector): n for kind, action, detector, n in counts}

    def _decisions(self, _options: Any) -> Iterable[Any]:
        merged = dict(self.retired)
        for guard in list(self.guards):
            for key, n in self._counts(guard).items():
                merged[key] = merged.get(key, 0) + n
        for (host, kind, action, detector), n in merged.items():
            yield self._observation(n, {"host": host, "kind": kind, "action": action, "detector": detector})

    def _healths(self) -> dict[str, dict[str, int]]:
        """Each host's counters, summed over its live guards."""
        by_host: dict[str, dict[str, int]] = {}
        for guard in list(self.guards):
            try:
                health = dict(guard.health())
            except Exception:  # a guard closed meanwhile has no counters any more
                continue
            total = by_host.setdefault(guard._metrics_host, {})
            for k, v in health.items():
                total[k] = total.get(k, 0) + int(v)
        return by_host

    def _observe(self, value: Callable[[dict[str, int]], Optional[int]]) -> Callable[[Any], Iterable[Any]]:
        def callback(_options: Any) -> Iterable[Any]:
            for host, health in self._healths().items():
                v = value(health)
                if v is not None:
                    yield self._observation(v, {"host": host})
        return callback

    def _store_decisions(self, _options: Any) -> Iterable[Any]:
        for host, health in self._healths().items():
            for on in ("store", "local", "refused"):
                v = health.get(f"store_on_{on}" if on != "refused" else "store_refused")
                if v is not None:
                    yield self._observation(v, {"host": host, "on": on})


_shared: Optional[tuple[Any, Recorder]] = None


def recorder(meter_provider: Any = None) -> Optional[Recorder]:
    """The instruments to record on, or None when OpenTelemetry is not in use (see the module doc).
    One set per provider: the last provider's is kept, so guards made one after another (the LiteLLM
    guardrail makes one per request) do not register the instruments again."""
    global _shared
    if meter_provider is None:
        api = sys.modules.get("opentelemetry.metrics")
        if api is None:
            return None
        meter_provider = api.get_meter_provider()
    if _shared is None or _shared[0] is not meter_provider:
        from importlib.metadata import PackageNotFoundError, version

        try:
            mine = version("loopguard")
        except PackageNotFoundError:
            mine = None
        _shared = (meter_provider, Recorder(meter_provider.get_meter("loopguard", mine)))
    return _shared[1]
