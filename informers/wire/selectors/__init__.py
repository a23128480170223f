"""Selectors: which objects a list or watch is about, parsed and evaluated
client-side with the API server's grammars.

One concept per module, every public name re-exported here:

* :mod:`~informers.wire.selectors.requirements`: a label requirement
  (:class:`LabelRequirement`, :class:`Operator`), validated as the server
  validates it;
* :mod:`~informers.wire.selectors.labels`: the label selector
  (:class:`LabelSelector`, ``labelSelector=``), a conjunction of
  requirements, and its parser; its matching is compiled once per selector;
* :mod:`~informers.wire.selectors.fields`: the field selector
  (:class:`FieldSelector`, :class:`FieldRequirement`, ``fieldSelector=``);
* :mod:`~informers.wire.selectors.shard`: the KEP-5866 shard selector
  (:class:`ShardSelector`, ``shardSelector=``), hash ranges over a field.

Selectors are immutable values, safe to share between threads. Bad input
raises :class:`~informers.errors.SelectorParseError`.
"""

from __future__ import annotations

from informers.wire.selectors.fields import FieldRequirement, FieldSelector
from informers.wire.selectors.labels import LabelSelector
from informers.wire.selectors.requirements import LabelRequirement, Operator
from informers.wire.selectors.shard import (
    HASH_SPACE,
    SHARD_FIELDS,
    SHARD_INFO_FIELD,
    ShardRange,
    ShardSelector,
    even_shard_range,
    even_shard_selector,
    fnv1a_64,
)

__all__ = [
    "HASH_SPACE",
    "SHARD_FIELDS",
    "SHARD_INFO_FIELD",
    "FieldRequirement",
    "FieldSelector",
    "LabelRequirement",
    "LabelSelector",
    "Operator",
    "ShardRange",
    "ShardSelector",
    "even_shard_range",
    "even_shard_selector",
    "fnv1a_64",
]
