"""`Config`: the CLI's TOML configuration as a typed, picklable Python object."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _core


# The largest configuration file read.
_MAX_CONFIG_BYTES = 4 << 20

class Section:
    """Read-only attribute view of one table of a configuration (``cfg.cache.size``)."""

    __slots__ = ("_path", "_data")

    def __init__(self, path: str, data: Mapping[str, Any]):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(f"{self._path}.{name}", self._data[name])
        except KeyError:
            raise AttributeError(f"configuration has no field {self._path}.{name}") from None

    def __getitem__(self, name: str) -> Any:
        return self._data[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Config is immutable: use Config.replace(**{'%s.%s': ...})" % (self._path, name))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Section):
            return self._data == other._data
        return self._data == other

    def __dir__(self):
        return list(self._data)

    def to_dict(self) -> dict:
        return copy.deepcopy(dict(self._data))

    def __repr__(self) -> str:
        return f"Section({self._path}={self._data!r})"


def _wrap(path: str, v: Any) -> Any:
    return Section(path, v) if isinstance(v, dict) else v


def _set_path(data: dict, dotted: str, value: Any) -> None:
    parts = dotted.replace("__", ".").split(".")
    d = data
    for p in parts[:-1]:
        if d.get(p) is None:
            d[p] = {}
        d = d[p]
    d[parts[-1]] = value


class Config:
    """One simulation configuration: the same fields as the CLI's TOML files (``shingled config``).

    Immutable; ``replace`` returns a modified copy. Equal configurations compare equal, and a
    configuration survives ``to_toml``/``from_toml`` and pickling unchanged.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Optional[Mapping[str, Any]] = None, **fields: Any):
        base = dict(data) if data is not None else json.loads(_core.config_default())
        for k, v in fields.items():
            _set_path(base, k, v)
        _check_finite(base, "")
        object.__setattr__(self, "_data", json.loads(_core.config_normalize(json.dumps(base))))

    # Construction -----------------------------------------------------------------------
    @classmethod
    def default(cls) -> "Config":
        """The CLI's default configuration."""
        return cls()

    @classmethod
    def from_toml(cls, text_or_path: Union[str, os.PathLike]) -> "Config":
        """Parses TOML text, or reads a TOML file when given a path.

        A `os.PathLike` is always a path. A str is TOML text when it has a line break, an ``=``
        or starts with ``[`` (a table); any other non-empty str is a path, and a path that names
        no file is a `ConfigError` saying so (never parsed as TOML)."""
        if isinstance(text_or_path, bytes):
            text_or_path = os.fsdecode(text_or_path)
        if not isinstance(text_or_path, (str, os.PathLike)):
            raise TypeError(f"Config.from_toml takes TOML text or a path, not {type(text_or_path).__name__}")
        looks_like_path = (
            isinstance(text_or_path, str)
            and text_or_path.strip() != ""
            and "\n" not in text_or_path
            and "=" not in text_or_path
            and not text_or_path.lstrip().startswith("[")
        )
        if looks_like_path and not Path(text_or_path).is_file():
            what = "is a directory, not a configuration file" if Path(text_or_path).is_dir() else "no such configuration file"
            raise _core.ConfigError(
                f"{text_or_path}: {what} (a configuration is a shingled.Config, the path of a TOML file, "
                "or TOML text with `key = value` lines)"
            )
        if isinstance(text_or_path, os.PathLike) or (looks_like_path and Path(text_or_path).is_file()):
            p = Path(text_or_path)
            # A configuration is a small text file: refuse a disk image or other binary file
            # before reading it whole (a 64 MiB image would take minutes to parse as TOML).
            try:
                with open(p, "rb") as f:
                    data = f.read(_MAX_CONFIG_BYTES + 1)
            except OSError as e:
                raise _core.ConfigError(f"{p}: {e}") from None
            if len(data) > _MAX_CONFIG_BYTES:
                raise _core.ConfigError(f"{p}: larger than {_MAX_CONFIG_BYTES >> 20} MiB: not a TOML configuration file")
            if b"\0" in data:
                raise _core.ConfigError(f"{p}: holds NUL bytes: not a TOML configuration file (a disk image or binary file?)")
            try:
                text = data.decode()
            except UnicodeDecodeError as e:
                raise _core.ConfigError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start}): not a TOML configuration file") from None
            try:
                return cls(json.loads(_core.config_from_toml(text)))
            except _core.ConfigError as e:
                raise _core.ConfigError(f"{p}: {e}") from None
        return cls(json.loads(_core.config_from_toml(text_or_path)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Config":
        return cls(data)

    @classmethod
    def from_json(cls, text: str) -> "Config":
        return cls(json.loads(text))

    # Export -----------------------------------------------------------------------------
    def to_toml(self) -> str:
        return _core.config_to_toml(self.to_json())

    def to_json(self) -> str:
        return json.dumps(self._data)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

    @property
    def label(self) -> str:
        """The label reports use (explicit label or the scheme name)."""
        return _core.config_label(self.to_json())

    # Modification -----------------------------------------------------------------------
    def replace(self, **fields: Any) -> "Config":
        """A copy with fields set; nested fields as ``drive__pb_size=`` or ``**{"drive.pb_size": ...}``."""
        return Config(self.to_dict(), **fields)

    def with_trace(self, trace: Union[str, os.PathLike]) -> "Config":
        return self.replace(**{"trace.path": os.fspath(trace)})

    def with_policy(self, policy: Union[str, Mapping[str, Any]]) -> "Config":
        """Policy by name, ``name:field=value,…`` string or table."""
        table = json.loads(_core.parse_policy(policy)) if isinstance(policy, str) else dict(policy)
        d = self.to_dict()
        if d.get("cache") is None:
            d["cache"] = {}
        d["cache"]["policy"] = table
        return Config(d)

    def with_cache(self, cache: Union[str, bool, None]) -> "Config":
        """Cache size (``"2%"``, ``"1GiB"``, ``"1/64"``); ``False``/``"none"`` for no cache."""
        d = self.to_dict()
        if cache is False or cache == "none":
            d["cache"] = None
        else:
            if d.get("cache") is None:
                d["cache"] = {}
            d["cache"]["size"] = str(cache)
        return Config(d)

    def with_drive(self, drive: Union[str, Mapping[str, Any]]) -> "Config":
        """A drive profile name (``shingled drives``) or a drive table."""
        table = json.loads(_core.drive_profile(drive)) if isinstance(drive, str) else dict(drive)
        return self.replace(drive=table)

    def with_setup(self, name: str) -> "Config":
        """A named set-up (``shingled.setups()``: ``pore``, ``sac``, ``generic``): its drive,
        CMR-only drive and I/O unit replace this configuration's."""
        return Config(json.loads(_core.apply_setup(self.to_json(), name)))

    def with_mode(self, mode: str) -> "Config":
        return self.replace(mode=mode)

    def scheme(self, name: str) -> "Config":
        """The configuration of scheme ``name`` (``smr-only``, ``cmr-only`` or a policy)."""
        return Config(json.loads(_core.scheme_config(self.to_json(), name)))

    # Python protocol --------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(name, self._data[name])
        except KeyError:
            raise AttributeError(f"configuration has no field {name}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Config is immutable: use Config.replace({name}=...)")

    def __dir__(self):
        return list(type(self).__dict__) + list(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._data == other._data

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __reduce__(self):
        return (Config.from_toml, (self.to_toml(),))

    def __repr__(self) -> str:
        return f"Config(label={self.label!r}, trace={self._data['trace']['path']!r}, mode={self._data['mode']!r})"


def _check_finite(v: Any, path: str) -> None:
    """A NaN or infinity anywhere in a configuration is a ConfigError naming its field (JSON
    has no such numbers, and the core would only say where in the JSON text it choked)."""
    import math

    if isinstance(v, float) and not math.isfinite(v):
        raise _core.ConfigError(f"configuration field {path or '(root)'}: {v} is not a finite number")
    if isinstance(v, dict):
        for k, x in v.items():
            _check_finite(x, f"{path}.{k}" if path else str(k))
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _check_finite(x, f"{path}[{i}]")
