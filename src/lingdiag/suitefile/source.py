"""Reading a suite file: UTF-8 YAML through the safe loader, with aliases that expand too far refused
(a "billion laughs" file is a few lines that would become billions of nodes once validated), nesting
deeper than any suite needs refused before anything recursive walks it, and a key given twice in
one mapping refused (YAML's loaders keep the last silently, dropping a definition).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from lingdiag.config import repeated_key
from lingdiag.errors import ConfigError

MAX_NODES = 100_000
"""More YAML nodes than this once aliases are expanded is refused (no real suite file comes near)."""
MAX_DEPTH = 50
"""Mappings and lists nested deeper than this are refused (a suite file nests about 8)."""


def suite_error(path: Path | str, where: str, message: str) -> ConfigError:
    """The one-line error of a suite file: ``FILE: key.path: what was expected``."""
    return ConfigError(f"{path}: {where}: {message}" if where else f"{path}: {message}")


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes ``node`` stands for with every alias expanded, computed without expanding (memoised)."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a recursive alias counts once instead of looping
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[key] = min(size, MAX_NODES + 1)
    return memo[key]


def _check_depth(path: Path | str, text: str) -> None:
    """Refuse nesting past ``MAX_DEPTH`` from the event stream (the parser is not recursive; the
    composer, the alias count and validation are).
    """
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
                raise suite_error(path, where,
                                  f"nested more than {MAX_DEPTH} levels deep; refused")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def read_yaml(path: Path) -> tuple[Any, bytes]:
    """The parsed document of ``path`` and its bytes (for the checksum).

    Raises:
        ConfigError: unreadable, not UTF-8, not YAML, nested past ``MAX_DEPTH``, a key twice in
            one mapping, or aliases expanding past ``MAX_NODES``.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise suite_error(path, "", f"cannot read: {e.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise suite_error(path, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    loader = yaml.SafeLoader(text)
    try:
        _check_depth(path, text)
        node = loader.get_single_node()
        if node is None:
            raise suite_error(path, "", "empty file; expected a mapping with name, items, conditions, metrics")
        repeated = repeated_key(node)
        if repeated is not None:
            raise suite_error(path, f"line {repeated[0]}", repeated[1])
        if _expanded_size(node, {}) > MAX_NODES:
            raise suite_error(path, "", f"aliases expand to more than {MAX_NODES:,} nodes; refused "
                              "(write the values out, or use fewer nested aliases)")
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise suite_error(path, where, f"not valid YAML: {e.problem}") from None
    except yaml.YAMLError as e:
        raise suite_error(path, "", f"not valid YAML: {e}") from None
    finally:
        loader.dispose()
    return data, raw
