# Every closure in a loop here is called within its iteration (a measurement):
"""The decode-on-demand store (:class:`informers.cache.compact.raw.RawStore`)
against parse-and-keep and lightkube's decoder, store-level, in one run.

    python -m benchmarks.bench_raw_store                 # 20k pods
    python -m benchmarks.bench_raw_store --n 50000 --events 20000
    python -m benchmarks.bench_raw_store --json out.json

Each contender runs in a fresh subprocess over the same list body (``--n``
realistic pods from :func:`benchmarks.bench_compact.realistic_pod`, with
``managedFields``, as a server sends them), held in memory as bytes, GC on:

* ``parse``: parse-and-keep -- the exact parser this project ships
  (:func:`informers.wire._json.loads`, orjson when installed) and
  ``Indexer.replace`` with a namespace index (the dict store's sync floor);
* ``raw``: :func:`informers.wire.raw.split_list` and ``RawStore.replace``
  with the same index (runs on the metadata record, no decode);
* ``raw-z``: the same with ``RawStore(compress=True)`` (the bytes kept
  deflated);
* ``lightkube``: ``lightkube.core.decoders.decode_list(body, Pod)`` (typed
  msgspec structs) kept in a dict by key;
* ``bytes``: the floor of any store keeping the bytes as sent --
  :func:`~informers.wire.raw.split_list` and each item's bytes kept in a
  list, nothing else (no key, no index, no metadata).

Reported per contender: sync seconds (parse + store), RSS growth per object
once the body is freed (and again after the reads below, the hot set
filled), and for the stores: cold ``get_by_key`` (a key never
read, so one decode) and the rate of watch events (``--events`` ADDED lines)
parsed, written with ``upsert`` and handed to a handler that takes only the
key (what the runtime's sources need). Ratios are to ``parse`` in the same
run. The informer path end to end and p99 event latency are measured by
``benchmarks.compare`` (its raw-store rows).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks.bench_compact import _dumps, _rss, realistic_pod
from informers.cache.transforms import strip_managed_fields

__all__ = ["main"]

CONTENDERS = ("parse", "raw", "raw-z", "lightkube", "bytes")


def _body(n: int, managed_fields: bool = True) -> bytes:
    pods = (realistic_pod(i) for i in range(n))
    if not managed_fields:
        pods = (strip_managed_fields(pod) for pod in pods)
    items = b",".join(_dumps(pod) for pod in pods)
    return (
        b'{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"1"},"items":['
        + items
        + b"]}"
    )


def _events(n: int, start: int) -> list[bytes]:
    return [
        b'{"type":"ADDED","object":' + _dumps(realistic_pod(start + i)) + b"}" for i in range(n)
    ]


def child(contender: str, body_file: str, n: int, events: int) -> dict[str, Any]:
    """One contender in this (fresh) process; returns its figures."""
    from informers.cache.compact.raw import RawStore
    from informers.cache.store import Indexer
    from informers.wire import _json
    from informers.wire.objects import NAMESPACE_INDEX, meta_namespace_key, namespace_index
    from informers.wire.raw import split_list, split_watch_event

    indexers = {NAMESPACE_INDEX: namespace_index}
    raw = contender.startswith("raw")
    compress = contender == "raw-z"
    lines = _events(events, n) if contender not in ("lightkube", "bytes") else []
    paged = raw or contender == "bytes"
    gc.collect()
    base = _rss()  # before the body: one allocation, returned to the OS when freed
    # As the informer lists (raw and bytes): pages of 500 items
    # (ReflectorConfig.page_size), each read as a body of its own, put into
    # the store's list buffer and freed.
    pages = _read_pages(body_file + ".pages") if paged else iter(())
    with open(body_file, "rb") as f:
        body = f.read() if not paged else b""
    store: Any
    start = time.perf_counter()
    if contender == "parse":
        store = Indexer(indexers=indexers)
        store.replace(_json.loads(body)["items"], "1")
    elif raw:
        store = RawStore(indexers=indexers, compress=compress)
        buffer = store.new_list_buffer()
        assert buffer is not None
        for page in pages:
            items = split_list(page)[1]
            buffer.put_many([store.key_of(item) for item in items], items)
            del items, page
        store.replace_prepared(buffer.finish(), "1")
        del buffer
    elif contender == "bytes":
        store = []
        for page in pages:
            store.extend(item.data for item in split_list(page)[1])
            del page
    else:
        from lightkube.core.decoders import decode_list
        from lightkube.resources.core_v1 import Pod

        _, _, pods = decode_list(body, Pod)
        store = {(p.metadata.namespace, p.metadata.name): p for p in pods}
    sync = time.perf_counter() - start
    body_len = os.path.getsize(body_file)
    del body
    gc.collect()
    out: dict[str, Any] = {
        "contender": contender,
        "n": n,
        "sync_s": sync,
        "rss_per_object": (_rss() - base) / n,
        "json_bytes_per_object": body_len / n,
    }
    if contender in ("lightkube", "bytes"):
        return out
    keys = [meta_namespace_key(realistic_pod(i)) for i in range(0, n, max(1, n // 2000))]
    start = time.perf_counter()
    for key in keys:
        store.get_by_key(key)
    out["cold_get_us"] = (time.perf_counter() - start) / len(keys) * 1e6
    gc.collect()
    out["rss_after_reads_per_object"] = (_rss() - base) / n
    if raw:
        # One decode and no hot set to grow (so no collector work for it).
        cold = RawStore(indexers=indexers, hot_objects=0, compress=compress)
        cold.replace(
            [item for page in _read_pages(body_file + ".pages") for item in split_list(page)[1]],
            "1",
        )
        start = time.perf_counter()
        for key in keys:
            cold.get_by_key(key)
        out["cold_get_nohot_us"] = (time.perf_counter() - start) / len(keys) * 1e6
        del cold
    seen: list[str] = []
    handler = seen.append
    start = time.perf_counter()
    if contender == "parse":
        loads = _json.loads
        for line in lines:
            obj = loads(line)["object"]
            key = meta_namespace_key(obj)
            store.upsert(key, obj)
            handler(key)
    else:
        for line in lines:
            _, obj = split_watch_event(line)
            key = store.key_of(obj)
            store.upsert(key, obj)
            handler(key)
    out["events_per_s"] = events / (time.perf_counter() - start)
    if compress:
        # The compression alone, per event (the codec's pack of each event's
        # object bytes): what the compressed store adds to the raw one.
        datas = [split_watch_event(line)[1].data for line in lines]
        pack = store.codec.pack
        start = time.perf_counter()
        for data in datas:
            pack(data)
        out["compress_us"] = (time.perf_counter() - start) / len(datas) * 1e6
    return out


def _pages(body: bytes, size: int) -> list[bytes]:
    """``body`` (a list) as list bodies of ``size`` items each."""
    import msgspec

    listed: Any = msgspec.defstruct("Listed", [("items", list[msgspec.Raw])])
    raw = msgspec.json.decode(body, type=listed).items
    head = b'{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"1"},"items":['
    return [
        head + b",".join(bytes(item) for item in raw[i : i + size]) + b"]}"
        for i in range(0, len(raw), size)
    ]


def _read_pages(path: str) -> Any:
    """The page bodies written by :func:`_write_pages`, one at a time."""
    with open(path, "rb") as f:
        while head := f.read(8):
            yield f.read(int.from_bytes(head, "little"))


def _write_pages(body: bytes, path: str, size: int = 500) -> None:
    with open(path, "wb") as f:
        for page in _pages(body, size):
            f.write(len(page).to_bytes(8, "little") + page)


def _run_child(contender: str, body_file: str, n: int, events: int) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_raw_store",
            "--child",
            contender,
            "--body",
            body_file,
            "--n",
            str(n),
            "--events",
            str(events),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode:
        return {"contender": contender, "error": proc.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="pods in the list")
    parser.add_argument("--events", type=int, default=10_000, help="watch lines")
    parser.add_argument("--only", default=",".join(CONTENDERS))
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--no-managed-fields",
        action="store_true",
        help="pods without managedFields (as a server omitting them would send)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--body", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.body, args.n, args.events)))
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        body_file = os.path.join(tmp, "podlist.json")
        body = _body(args.n, managed_fields=not args.no_managed_fields)
        with open(body_file, "wb") as f:
            f.write(body)
        _write_pages(body, body_file + ".pages")
        del body
        rows = {
            name: _run_child(name, body_file, args.n, args.events) for name in args.only.split(",")
        }
    ref = rows.get("parse", {})
    what = "without" if args.no_managed_fields else "with"
    print(f"{args.n} realistic pods ({what} managedFields), {args.events} watch events")
    head = f"{'':10} {'sync s':>8} {'x parse':>8} {'RSS B/obj':>10} {'+reads':>7}"
    print(head + f" {'cold get us':>12} {'events/s':>10} {'x parse':>8} {'x lightkube (sync)':>18}")
    lightkube = rows.get("lightkube", {})
    for name, row in rows.items():
        if "error" in row:
            print(f"{name:10} failed: {row['error']}")
            continue
        sync_ratio = row["sync_s"] / ref["sync_s"] if "sync_s" in ref else float("nan")
        ev = row.get("events_per_s")
        ev_ratio = ev / ref["events_per_s"] if ev and "events_per_s" in ref else float("nan")
        cold = row.get("cold_get_us", float("nan"))
        after = row.get("rss_after_reads_per_object", float("nan"))
        print(
            f"{name:10} {row['sync_s']:8.3f} {sync_ratio:8.2f} {row['rss_per_object']:10.0f}"
            f" {after:7.0f} {cold:12.1f} {ev or float('nan'):10.0f} {ev_ratio:8.2f}"
            f" {lightkube.get('sync_s', float('nan')) / row['sync_s']:18.2f}"
        )
    if "json_bytes_per_object" in rows.get("raw", {}):
        print(f"JSON bytes per pod in the body: {rows['raw']['json_bytes_per_object']:.0f}")
    if "compress_us" in rows.get("raw-z", {}) and "events_per_s" in ref:
        compress = rows["raw-z"]["compress_us"]
        event = 1e6 / ref["events_per_s"]
        print(
            f"raw-z compression alone: {compress:.2f} us per event"
            f" ({compress / event:.0%} of a parse-and-keep event's {event:.1f} us)"
        )
    for name in ("raw", "raw-z"):
        if "cold_get_nohot_us" in rows.get(name, {}):
            nohot = rows[name]["cold_get_nohot_us"]
            print(f"{name} cold get_by_key with hot_objects=0: {nohot:.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
