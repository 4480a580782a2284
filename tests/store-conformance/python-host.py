"""The Python store loop (``LoopGuard(store=…)``) for the store conformance suite (run.py): the
options of ``loopguard replay --store`` in, one trace event a line on stdin, and on stdout what
its public API says, unconverted: per event {"decision": the line of ``apply_events`` or null
when it raised the store's LoopGuardError (fail closed), "health": ``health()``}, at the end
{"stats": ``health()``}. The logger ``loopguard.store`` goes to stderr.

usage: python python-host.py --config FILE --store URL [--store-prefix P] [--store-deadline-ms N]
       [--store-fail-closed] [--store-ca F] [--store-cert F --store-key F]
"""

import argparse
import json
import logging
import sys

from loopguard import LoopGuard, LoopGuardError


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--store-prefix", default="lg:1:")
    ap.add_argument("--store-deadline-ms", type=int)
    ap.add_argument("--store-fail-closed", action="store_true")
    ap.add_argument("--store-ca")
    ap.add_argument("--store-cert")
    ap.add_argument("--store-key")
    a = ap.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s %(levelname)s: %(message)s")
    with open(a.config) as f:
        config = f.read()
    with LoopGuard(config, store=a.store, store_prefix=a.store_prefix, store_deadline_ms=a.store_deadline_ms,
                   store_fail_closed=a.store_fail_closed, store_ca=a.store_ca, store_cert=a.store_cert,
                   store_key=a.store_key) as guard:
        n = 0
        for line in sys.stdin:
            if not line.strip():
                continue
            n += 1
            try:
                decision = guard.apply_events(line.rstrip("\n"), first_line=n)
            except LoopGuardError as e:
                if e.kind != "store":
                    raise
                decision = None
            print(json.dumps({"decision": decision, "health": guard.health()}), flush=True)
        print(json.dumps({"stats": guard.health()}), flush=True)


if __name__ == "__main__":
    main()
