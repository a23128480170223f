"""The client against its peers, side by side in one run, on the emulator.

* **cached get**: :meth:`Client.get <informers.toolkit.client.Client.get>`
  of a ConfigMap the factory's informer caches, against a
  :class:`~informers.cache.listers.Lister` read of the same key from the same
  cache (the floor: what a reconcile did before the client). Target: within
  1.2x.
* **live writes**: create, replace (update), merge patch and delete of
  ConfigMaps through the client, against the official client's generated
  ``CoreV1Api`` making the same request over the same ``ApiClient`` (which
  turns every answer into models). Target: within 1.2x of it.

Rounds interleave the contenders and the ratio reported is the median of the
per-round ratios, so a noisy neighbour hits both alike. Pinning the process
to one CPU steadies the cached-get figures (nanoseconds each):

    PYTHONPATH=. taskset -c 1 python -m benchmarks.bench_client
    PYTHONPATH=. python -m benchmarks.bench_client --rounds 3 --gets 20000 --writes 100
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client as k8s

from informers import Client, SharedInformerFactory, wait_for_cache_sync
from informers.testing import ApiServer

NAMESPACE = "default"
OBJECTS = 1000
GET_TARGET = 1.2
WRITE_TARGET = 1.2
VERBS = ("create", "update", "patch", "delete")


def _time(call: Callable[[], object], times: int) -> float:
    start = time.perf_counter()
    for _ in range(times):
        call()
    return (time.perf_counter() - start) / times


def _body(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}},
        "data": {"value": value, **{f"key-{n}": f"value-{n}" for n in range(10)}},
    }


def measure_gets(server: ApiServer, api: Any, rounds: int, gets: int) -> dict[str, Any]:
    """Seconds per read (median of the rounds) and the median ratio."""
    server.create_many(
        "configmaps",
        (_body(f"cm-{i}", str(i)) for i in range(OBJECTS)),
        NAMESPACE,
    )
    factory = SharedInformerFactory(api)
    try:
        informer = factory.configmaps()
        factory.start()
        wait_for_cache_sync(informer, timeout=30)
        kube = Client(api, factory=factory)
        lister = factory.lister("configmaps")
        names = [f"cm-{i}" for i in range(0, OBJECTS, max(1, OBJECTS // 100))]
        get, list_get = kube.get, lister.get
        assert get("configmaps", names[0], namespace=NAMESPACE) is list_get(names[0], NAMESPACE)

        def ours() -> None:
            for name in names:
                get("configmaps", name, namespace=NAMESPACE)

        def floor() -> None:
            for name in names:
                list_get(name, NAMESPACE)

        per_call = len(names)
        calls = max(1, gets // per_call)
        _time(ours, calls)  # warm up
        _time(floor, calls)
        ours_s, floor_s, ratios = [], [], []
        for _ in range(rounds):
            f = _time(floor, calls) / per_call
            o = _time(ours, calls) / per_call
            floor_s.append(f)
            ours_s.append(o)
            ratios.append(o / f)
        return {
            "ours": statistics.median(ours_s),
            "floor": statistics.median(floor_s),
            "ratio": statistics.median(ratios),
        }
    finally:
        factory.shutdown()


class _Writers:
    """The same four requests, by the client and by ``CoreV1Api``."""

    def __init__(self, api: Any) -> None:
        self.kube = Client(api)
        self.core = k8s.CoreV1Api(api)
        self.serial = 0

    def run(self, who: str, verb: str, names: list[str]) -> float:
        """Seconds per request of ``verb`` by ``who`` over ``names``."""
        self.serial += 1
        value = str(self.serial)
        kube, core = self.kube, self.core
        start = time.perf_counter()
        for name in names:
            body = _body(name, value)
            if who == "client":
                if verb == "create":
                    kube.create(body)
                elif verb == "update":
                    kube.update(body)
                elif verb == "patch":
                    kube.patch("configmaps", name, {"data": {"value": value}}, namespace=NAMESPACE)
                else:
                    kube.delete("configmaps", name, namespace=NAMESPACE)
            elif verb == "create":
                core.create_namespaced_config_map(NAMESPACE, body)
            elif verb == "update":
                core.replace_namespaced_config_map(name, NAMESPACE, body)
            elif verb == "patch":
                core.patch_namespaced_config_map(name, NAMESPACE, {"data": {"value": value}})
            else:
                core.delete_namespaced_config_map(name, NAMESPACE)
        return (time.perf_counter() - start) / len(names)


def measure_writes(api: Any, rounds: int, writes: int) -> dict[str, dict[str, float]]:
    """Per verb: seconds per request of each (median) and the median ratio."""
    writers = _Writers(api)
    samples: dict[str, dict[str, list[float]]] = {
        verb: {"client": [], "official": [], "ratio": []} for verb in VERBS
    }
    for number in range(rounds + 1):  # the first round warms up
        order = ("client", "official") if number % 2 else ("official", "client")
        names = {who: [f"{who}-{number}-{i}" for i in range(writes)] for who in order}
        for verb in VERBS:
            took = {who: writers.run(who, verb, names[who]) for who in order}
            if number:
                samples[verb]["client"].append(took["client"])
                samples[verb]["official"].append(took["official"])
                samples[verb]["ratio"].append(took["client"] / took["official"])
    return {
        verb: {key: statistics.median(values) for key, values in by.items()}
        for verb, by in samples.items()
    }


def run(rounds: int = 5, gets: int = 50_000, writes: int = 200) -> dict[str, Any]:
    """Both measurements on one fresh emulator."""
    with ApiServer() as server:
        api = server.api_client()
        try:
            return {
                "gets": measure_gets(server, api, rounds, gets),
                "writes": measure_writes(api, rounds, writes),
            }
        finally:
            api.close()


def report(result: dict[str, Any]) -> bool:
    """Print the table; whether every target was met."""
    gets = result["gets"]
    ok = gets["ratio"] <= GET_TARGET
    print(f"{'case':<34}{'ours':>12}{'peer':>12}{'ratio':>8}  target")
    print(
        f"{'cached get vs lister read':<34}{gets['ours'] * 1e9:>10.0f}ns"
        f"{gets['floor'] * 1e9:>10.0f}ns{gets['ratio']:>8.2f}  <= {GET_TARGET}"
    )
    for verb, by in result["writes"].items():
        ok = ok and by["ratio"] <= WRITE_TARGET
        print(
            f"{'live ' + verb + ' vs CoreV1Api':<34}{by['client'] * 1e6:>10.0f}us"
            f"{by['official'] * 1e6:>10.0f}us{by['ratio']:>8.2f}  <= {WRITE_TARGET}"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gets", type=int, default=50_000, help="cached gets per round")
    parser.add_argument("--writes", type=int, default=200, help="requests per verb per round")
    args = parser.parse_args(argv)
    report(run(args.rounds, args.gets, args.writes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
