"""Opening SQLite connections with the pragmas contextchef relies on, and short write transactions.

Pragma choices, set on every connection and read back before any write:

- `busy_timeout = 10000` first of all, before the first schema read, so a connection opened
  while another process writes waits instead of failing with `database is locked`. Seed 004's
  peer uses 5 s; we keep 10 s on purpose. Writes do not depend on it: `begin_immediate`
  retries for `WRITE_RETRY_BUDGET_S` (30 s) whatever it is, and switching on WAL at the first
  open retries for the busy timeout (SQLite refuses both at once, without waiting, when
  another connection holds the write lock of a file still in rollback mode: waiting for a lock
  upgrade there could deadlock, and racing first opens meet exactly that). It bounds the
  statements outside those loops: a read arriving while another process recovers the WAL
  after a crash, `db vacuum`'s checkpoint and VACUUM. 10 s lets them outlast one long write
  transaction or recovery (a migration step, a batch of thousands of entries) instead of
  failing after 5 s; a test keeps it at 5 s or more.
- `foreign_keys = ON`: SQLite ships with them off, which silently disables every cascade.
- `synchronous = NORMAL`: in WAL mode a commit survives a crash of the process (SIGKILL, an
  exception) and the file can never be corrupted; only a power loss or OS crash may roll back
  the last transactions. FULL would add an fsync to every commit, a poor trade for a context
  store whose writes are small and frequent.
- `temp_store = MEMORY`: sorts and temporary indexes never touch the disk.
- `journal_mode = WAL`, switched on by the caller only after the schema fence accepted the file
  (`enable_wal`), so a database this build must refuse is never modified.

A new database file is created 0600 before SQLite opens it (see private.py), whatever the umask.

Write transactions are `BEGIN IMMEDIATE`: the write lock is taken up front, so a transaction
never fails half-way on a lock upgrade. Taking it is retried with bounded exponential backoff on
`SQLITE_BUSY` (on top of the busy timeout) and gives up with `StoreBusyError`. Readers never take
the write lock, and in WAL mode they never block a writer. `nowait_transaction` is the
write for the read path (recording access times): it tries the write lock once, without the
busy timeout, and reports whether it got it instead of waiting.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contextchef.errors import StoreBusyError, StoreCorruptError, StoreError
from contextchef.store.backends.sqlite.private import create_private_file

__all__ = [
    "BUSY_TIMEOUT_MS",
    "WRITE_RETRY_BUDGET_S",
    "begin_immediate",
    "connect",
    "enable_wal",
    "is_busy",
    "nowait_transaction",
    "read_pragmas",
    "require_fts5",
    "translate_errors",
    "write_transaction",
]

log = logging.getLogger("contextchef.store.backends.sqlite.connection")

BUSY_TIMEOUT_MS = 10_000
"""How long one statement waits for a lock inside SQLite before reporting SQLITE_BUSY (10 s,
not the seed's 5 s: see the module docstring)."""

WRITE_RETRY_BUDGET_S = 30.0
"""How long `write_transaction` keeps retrying `BEGIN IMMEDIATE` before `StoreBusyError`."""

_EXPECTED = {"busy_timeout": BUSY_TIMEOUT_MS, "foreign_keys": 1, "synchronous": 1}
_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_CORRUPT_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}


def connect(path: Path | str, *, readonly: bool = False) -> sqlite3.Connection:
    """Open `path` in autocommit mode with contextchef's pragmas (WAL is `enable_wal`'s job).

    `readonly` opens with `mode=ro`: nothing, not even a checkpoint, can change the file.
    """
    target = Path(path)
    if not readonly:
        try:
            create_private_file(target)
        except FileNotFoundError:
            pass  # no directory: SQLite reports it below, in the store's terms
        except OSError as exc:
            raise StoreError(f"cannot create {target}: {exc.strerror or exc}") from exc
    uri = f"{target.resolve().as_uri()}?mode={'ro' if readonly else 'rwc'}"
    with translate_errors(f"opening {target}"):
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA temp_store = MEMORY")
            _verify(conn, target)
        except BaseException:
            conn.close()
            raise
    return conn


def enable_wal(conn: sqlite3.Connection, location: str) -> None:
    """Switch the database to WAL (persistent in the file) and check that it took. Retried
    while another connection holds the file's write lock (see the module docstring), within
    the busy timeout."""
    with translate_errors(f"enabling WAL on {location}"):
        switched = _retrying_busy(
            conn,
            "PRAGMA journal_mode = WAL",
            BUSY_TIMEOUT_MS / 1000,
            f"switching {location} to WAL",
        )
        mode = switched.fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreError(
            f"{location} cannot use WAL journaling (got {mode!r}); contextchef needs WAL so "
            "readers never block writers. Is the file on a network filesystem?"
        )


def read_pragmas(conn: sqlite3.Connection) -> dict[str, object]:
    """The pragmas this module sets, read back from the connection."""
    names = ("journal_mode", "busy_timeout", "foreign_keys", "synchronous")
    return {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names}


def _verify(conn: sqlite3.Connection, target: Path) -> None:
    actual = read_pragmas(conn)
    wrong = {k: actual[k] for k, v in _EXPECTED.items() if actual[k] != v}
    if wrong:
        raise StoreError(f"{target}: SQLite refused the connection pragmas {wrong}")


def require_fts5(conn: sqlite3.Connection) -> None:
    """Fail with a clear error when this Python's SQLite was built without FTS5."""
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.fts5_probe")
    except sqlite3.OperationalError as exc:
        raise StoreError(
            f"the SQLite library of this Python ({sqlite3.sqlite_version}) lacks the FTS5 "
            "extension, which the SQLite store needs for search; use a Python built with FTS5"
        ) from exc


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether `exc` is SQLITE_BUSY or SQLITE_LOCKED (by error code, never by message text)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _BUSY_CODES


def _is_corrupt(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _CORRUPT_CODES


@contextmanager
def translate_errors(
    doing: str, *, namespace: str | None = None, path: str | None = None
) -> Iterator[None]:
    """Turn `sqlite3` errors raised inside the block into the `StoreError` family."""
    try:
        yield
    except sqlite3.Error as exc:
        message = f"{doing}: {exc}"
        if is_busy(exc):
            raise StoreBusyError(message, namespace=namespace, path=path) from exc
        if _is_corrupt(exc):
            raise StoreCorruptError(
                f"{message}; run `contextchef db check` and `contextchef db repair`",
                namespace=namespace,
                path=path,
            ) from exc
        raise StoreError(message, namespace=namespace, path=path) from exc


def begin_immediate(conn: sqlite3.Connection, *, budget_s: float = WRITE_RETRY_BUDGET_S) -> None:
    """Take the write lock, retrying SQLITE_BUSY with jittered backoff within `budget_s`."""
    _retrying_busy(conn, "BEGIN IMMEDIATE", budget_s, "taking the write lock")


def _retrying_busy(
    conn: sqlite3.Connection, statement: str, budget_s: float, doing: str
) -> sqlite3.Cursor:
    """`conn.execute(statement)`, retrying SQLITE_BUSY with jittered exponential backoff
    within `budget_s`; then `StoreBusyError` naming what it was `doing`."""
    deadline = time.monotonic() + budget_s
    delay = 0.005
    attempts = 0
    while True:
        attempts += 1
        try:
            cursor = conn.execute(statement)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                if is_busy(exc):
                    raise StoreBusyError(
                        f"{doing}: the database stayed locked by another writer for "
                        f"{budget_s:.0f} s"
                    ) from exc
                raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)
        else:
            if attempts > 1:
                log.debug("%s after %d attempts", doing, attempts)
            return cursor


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A `BEGIN IMMEDIATE` … `COMMIT` block, rolled back when the body raises.

    When the connection is already inside a transaction (a batch), the block joins it.
    """
    if conn.in_transaction:
        yield conn
        return
    begin_immediate(conn)
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise


@contextmanager
def nowait_transaction(conn: sqlite3.Connection) -> Iterator[bool]:
    """A write transaction taken only if the write lock is free right now; yields whether it was.

    With False the body must skip its writes (nothing is open). The busy timeout is set to 0
    for the one `BEGIN IMMEDIATE` and restored right after, so the caller never waits for
    another writer. Inside an open transaction (a batch) the block joins it and yields True.
    """
    if conn.in_transaction:
        yield True
        return
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
        began = True
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
        began = False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not began:
        yield False
        return
    try:
        yield True
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
