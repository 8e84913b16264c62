"""Suite-wide fixtures: no network but loopback, a private data directory for every test.

The library reads `CONTEXTCHEF_HOME` and otherwise uses the platform's user data directory, the
same under pytest as anywhere else. Keeping the suite away from the real user data is this
file's job: `pytest_configure` points `CONTEXTCHEF_HOME` at a temporary directory for the whole
session (each test then gets its own, `_private_home`), `_real_user_data_is_off_limits` fails any
test that asks platformdirs for the real contextchef data directory, and `pytest_sessionfinish`
fails the run if the real directory was created or changed anyway (an explicit path into it).
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from contextchef.store import datadir

_HOME_ENV = datadir.HOME_ENV
_REAL_USER_DATA = datadir.user_data_dir().resolve()
"""The real contextchef data directory of the person running the tests, fixed at import."""

_Fingerprint = tuple[tuple[str, int, int], ...] | None


def _fingerprint(directory: Path) -> _Fingerprint:
    """None when `directory` is absent, else (name, size, mtime_ns) of its top-level files."""
    try:
        children = sorted(directory.iterdir())
    except FileNotFoundError:
        return None
    found = []
    for child in children:
        stat = child.stat()
        found.append((child.name, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


_session: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    """Give the whole session a temporary CONTEXTCHEF_HOME; remember the real dir's state."""
    del config
    _session["fingerprint"] = _fingerprint(_REAL_USER_DATA)
    _session["previous_home"] = os.environ.get(_HOME_ENV)
    home = tempfile.mkdtemp(prefix="contextchef-test-home-")
    _session["home"] = home
    os.environ[_HOME_ENV] = home


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when the real user data directory was created or modified."""
    del exitstatus
    if _fingerprint(_REAL_USER_DATA) != _session.get("fingerprint"):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (
            f"the test session created or modified the real user data directory "
            f"{_REAL_USER_DATA}; tests must use CONTEXTCHEF_HOME or tmp_path"
        )
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(f"ERROR: {message}", red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    del config
    previous = _session.get("previous_home")
    if previous is None:
        os.environ.pop(_HOME_ENV, None)
    else:
        os.environ[_HOME_ENV] = previous
    if "home" in _session:
        shutil.rmtree(_session["home"], ignore_errors=True)


_real_user_data_dir = platformdirs.user_data_dir


def _guarded_user_data_dir(*args: Any, **kwargs: Any) -> str:
    path = _real_user_data_dir(*args, **kwargs)
    resolved = Path(path).resolve()
    if resolved == _REAL_USER_DATA or _REAL_USER_DATA in resolved.parents:
        pytest.fail(
            f"this test would use the real user data directory {_REAL_USER_DATA}; set "
            f"{_HOME_ENV} (monkeypatch.setenv) or pass an explicit path under tmp_path"
        )
    return path


@pytest.fixture(autouse=True)
def _real_user_data_is_off_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking platformdirs for the real contextchef data directory fails the test."""
    monkeypatch.setattr(platformdirs, "user_data_dir", _guarded_user_data_dir)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden payload files from the current output",
    )


@pytest.fixture(autouse=True)
def _private_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point CONTEXTCHEF_HOME at a fresh directory so no test touches the user's data."""
    monkeypatch.setenv("CONTEXTCHEF_HOME", str(tmp_path_factory.mktemp("home")))


_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and (host in ("localhost", "::1") or host.startswith(("127.", "/"))):
        return _real_connect(self, address)
    if self.family == socket.AF_UNIX:
        return _real_connect(self, address)
    raise RuntimeError(f"network access to {address!r} is forbidden in tests")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    yield


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture(autouse=True)
def _close_postgres_backends() -> Iterator[None]:
    """Close the PostgreSQL backends a test opened through `tests.contract.pg`, wherever the
    test lives (retrieval and memory tests reuse the contract backends): each holds pooled
    server connections, and a suite that kept them would exhaust the server's slots."""
    yield
    pg = sys.modules.get("tests.contract.pg")
    if pg is not None:
        pg.close_opened()
