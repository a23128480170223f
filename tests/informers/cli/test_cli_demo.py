"""``kube-informers demo`` as the whole platform: the realistic cluster, the
trackers, the controller on the runtime and the SQL mirror, API vs DB."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from informers.cli import main
from informers.cli.demo import run_demo


def test_demo_default_run_prints_the_api_vs_db_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo"]) == 0  # the README's main command, as it runs by default
    out = capsys.readouterr().out
    assert "API vs database" in out
    assert "index synchronization tracker fired" in out
    assert "pods-per-replicaset controller" in out
    assert "NO" not in out


def test_demo_report_covers_the_platform() -> None:
    report = run_demo(pods=40, writes=30, seed=4)
    assert report.converged
    assert report.cluster["pods"] == 40
    assert report.cluster["replicasets.apps"] == report.cluster["deployments.apps"] == 4
    assert report.index_counts["pods"] == 40
    assert set(report.index_counts) == {str(kind) for kind in ("namespaces", "nodes")} | {
        "deployments.apps",
        "replicasets.apps",
        "pods",
    }
    cached = report.phases[-1].cached
    assert sum(report.pods_per_replicaset.values()) == cached  # every pod has its owner
    assert report.tracked_pods == cached
    assert report.reconciles >= len(report.pods_per_replicaset)
    assert report.index_lookups >= report.reconciles
    mirrored = {count.resource: count for count in report.mirror}
    assert set(mirrored) == set(report.index_counts)
    assert all(count.matches and count.api_objects == count.db_rows for count in report.mirror)
    assert mirrored["pods"].db_rows == cached


def test_demo_mirrors_into_the_given_database(tmp_path: Path) -> None:
    db_file = tmp_path / "demo.db"
    argv = ["demo", "--objects", "20", "--writes", "10", "--duration", "0.5"]
    assert main([*argv, "--db", f"sqlite:///{db_file}"]) == 0
    engine = sa.create_engine(f"sqlite:///{db_file}")
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT count(*) FROM deployments_apps")).scalar_one()
    finally:
        engine.dispose()
    assert rows == 2


def test_demo_without_the_mirror_says_so() -> None:
    report = run_demo(pods=20, writes=10, seed=5, mirror=False)
    assert report.converged
    assert report.mirror == []
    assert report.mirror_skipped == "not asked for"


def test_demo_with_a_bad_database_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = f"sqlite:///{tmp_path / 'no' / 'dir' / 'x.db'}"
    assert main(["demo", "--objects", "10", "--writes", "5", "--db", bad]) == 1
    err = capsys.readouterr().err
    assert "kube-informers demo: database" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--objects", "0"], "must be at least 1, not 0"),
        (["demo", "--duration", "-1"], "above 0"),
    ],
)
def test_demo_options_are_validated(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_skipped_mirror_hint_keeps_its_extra_name() -> None:
    """rich must not eat "[mirror]" as markup."""
    from io import StringIO

    from rich.console import Console

    from informers.cli._common import MIRROR_EXTRA_HINT
    from informers.cli.demo import DemoReport, print_summary

    out = StringIO()
    report = DemoReport(initial_pods=0)
    report.mirror_skipped = f"SQLAlchemy is not installed: {MIRROR_EXTRA_HINT}"
    print_summary(report, Console(file=out, width=200))
    assert "pip install 'kube-informers[mirror]'" in out.getvalue()
