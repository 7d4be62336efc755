"""The command table: every command registers here with its help and its own options."""
from __future__ import annotations

import argparse
import sys
from typing import Callable

Setup = Callable[[argparse.ArgumentParser], None]
COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, Setup | None, bool]] = {}


def command(name: str, help: str, *, setup: Setup | None = None, db_options: bool = True):
    """Register a command; ``setup`` adds its own arguments, ``db_options`` --db/--data-dir."""
    def register(func):
        COMMANDS[name] = (func, help, setup, db_options)
        return func
    return register


def fail(message: str) -> int:
    print(f"lobbytalks: {message}", file=sys.stderr)
    return 1


def add_db_options(parser: argparse.ArgumentParser, default: object = None) -> None:
    """``default=argparse.SUPPRESS`` on a command's sub-parser: what its parent parsed stays."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--db", metavar="PATH", default=default, help="SQLite database file")
    where.add_argument("--data-dir", metavar="DIR", default=default,
                       help="data folder holding lobbytalks.db and secret.key "
                            "(default ./lobbytalks-data)")


def settings_from(args: argparse.Namespace, **extra):
    from ..settings import Settings
    return Settings.load(db=getattr(args, "db", None), data_dir=getattr(args, "data_dir", None),
                         **extra)


def open_postgres(settings):
    """The configured PostgreSQL ``Database`` (the caller closes it); raises
    ``db.DatabaseError`` when it cannot be reached."""
    from ..db import open_database
    return open_database(settings)
