"""JSON-in-TEXT columns: what Python code gets back, on a real (SQLite) database."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.dialects.mysql import mariadb
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.schema import CreateTable

from zun.db import models
from zun.db.types import JSONDict, JSONList, JSONText


class _Base(DeclarativeBase):
    pass


class Row(_Base):
    __tablename__ = "row"
    id: Mapped[int] = mapped_column(primary_key=True)
    anything: Mapped[object] = mapped_column(JSONText(), nullable=True)
    mapping: Mapped[dict | None] = mapped_column(JSONDict())
    items: Mapped[list | None] = mapped_column(JSONList())


def _engine() -> sa.Engine:
    engine = sa.create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    return engine


def test_values_round_trip_and_none_stays_null() -> None:
    engine = _engine()
    with Session(engine) as session:
        session.add(Row(id=1, anything=[1, "two", {"3": None}], mapping={"a": "é"}, items=[]))
        session.add(Row(id=2))
        session.commit()
    with engine.connect() as conn:
        raw = dict(conn.execute(sa.text("SELECT id, mapping FROM row")).all())
    with Session(engine) as session:
        one, two = session.get(Row, 1), session.get(Row, 2)

    assert raw == {1: '{"a":"\\u00e9"}', 2: None}
    assert one.anything == [1, "two", {"3": None}]
    assert one.mapping == {"a": "é"} and one.items == []
    assert (two.anything, two.mapping, two.items) == (None, None, None)


def test_text_that_is_not_json_comes_back_as_is() -> None:
    engine = _engine()
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO row (id, anything) VALUES (1, 'sleep 10')"))
    with Session(engine) as session:
        assert session.get(Row, 1).anything == "sleep 10"


def test_in_place_changes_are_saved() -> None:
    engine = _engine()
    with Session(engine) as session:
        session.add(Row(id=1, mapping={"a": "1"}, items=["x"]))
        session.commit()
        row = session.get(Row, 1)
        row.mapping["b"] = "2"
        row.items.append("y")
        session.commit()
    with Session(engine) as session:
        row = session.get(Row, 1)
        assert row.mapping == {"a": "1", "b": "2"} and row.items == ["x", "y"]


def test_medium_columns_are_mediumtext_on_mysql_and_mariadb_only() -> None:
    table = models.Container.__table__
    for dialect in (mysql.dialect(), mariadb.MariaDBDialect()):
        ddl = str(CreateTable(table).compile(dialect=dialect))
        assert "annotations MEDIUMTEXT" in ddl and "labels TEXT" in ddl
    ddl = str(CreateTable(table).compile(dialect=postgresql.dialect()))
    assert "annotations TEXT" in ddl
    volume_ddl = str(CreateTable(models.Volume.__table__).compile(dialect=mariadb.MariaDBDialect()))
    assert "contents MEDIUMTEXT" in volume_ddl
