"""One table of a TOML file as it is checked: the checker behind a tournament file (config.py) and the server's
settings (service/settings.py)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from referee.terminal import said

from .problems import ConfigError


class Table:
    """One table of a TOML file as it is checked, the one checker behind a tournament file (here) and the server's
    settings (service/settings.py): a value read through it that is wrong is refused with a ConfigError naming the
    file and the key (``time_control.bank_ms``)."""

    def __init__(self, data: object, source: str, key: str = "", known: Collection[str] = ()) -> None:
        """``data``, the table at ``key`` of ``source``; with ``known``, a key not in it is refused."""
        if not isinstance(data, dict):
            raise ConfigError(source, key, "must be a table")
        self.data: dict[str, Any] = data
        self.source, self.key = source, key
        for k in data if known else ():
            if k not in known:
                raise self.error(k, f"unknown key (known: {', '.join(sorted(known))})")

    def error(self, key: str, reason: str) -> ConfigError:
        return ConfigError(self.source, f"{self.key}.{key}" if self.key else key, reason)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be a whole number, not {said(value)}")
        if not lo <= value <= hi:
            raise self.error(key, f"{value} is out of range ({lo} to {hi})")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, not {said(value)}")
        return value

    def table(self, key: str, known: Collection[str]) -> Table:
        """The table at ``key`` (empty when left out)."""
        return Table(self.data.get(key, {}), self.source, f"{self.key}.{key}" if self.key else key, known)
