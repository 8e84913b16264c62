"""The embedded default store: SQLite with a schema fence, migrations and stable project identity.

`SQLiteBackend` implements the whole storage protocol over one machine-wide `context.db`, and
keeps every version of the namespaces the store declares versioned (`keep_versions`,
`history`); `maintenance`, `backup`, `repair` and `upgrade` hold the operations behind
`contextchef db`; `guard` keeps migrate-on-open from running under an older build.
"""

from contextchef.store.backends.sqlite.backend import SQLiteBackend
from contextchef.store.backends.sqlite.identity import ProjectRef
from contextchef.store.backends.sqlite.migrations import LATEST_SCHEMA_VERSION

__all__ = [
    "LATEST_SCHEMA_VERSION",
    "ProjectRef",
    "SQLiteBackend",
]
