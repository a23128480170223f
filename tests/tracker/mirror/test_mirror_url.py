"""The mirror's database URLs: ``postgres://`` is PostgreSQL, as in most
``DATABASE_URL``\\ s; other dialects are refused with a typed error."""

from __future__ import annotations

import pytest

from tracker.errors import MirrorConfigError
from tracker.mirror import create_mirror_engine


@pytest.mark.parametrize(
    "url",
    [
        "postgres://user@127.0.0.1:1/db",
        "postgresql://user@127.0.0.1:1/db",
        "postgres+psycopg://user@127.0.0.1:1/db",
    ],
)
def test_postgres_urls_mean_postgresql_through_psycopg(url: str) -> None:
    engine = create_mirror_engine(url)  # connects lazily: nothing is reached
    try:
        assert (engine.dialect.name, engine.dialect.driver) == ("postgresql", "psycopg")
        assert engine.url.database == "db"
    finally:
        engine.dispose()


def test_other_dialects_are_refused() -> None:
    with pytest.raises(MirrorConfigError, match="sqlite and postgresql"):
        create_mirror_engine("mysql://user@127.0.0.1/db")
