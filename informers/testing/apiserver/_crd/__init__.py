"""Custom resources as their CustomResourceDefinition shapes them: structural
schemas (defaulting, pruning, validation), the ``scale`` subresource over the
CRD's paths, ``additionalPrinterColumns`` in Tables and the subresources
discovery names. Private to the emulator.
"""

from __future__ import annotations

from informers.testing.apiserver._crd.definition import (
    ScalePaths,
    admit,
    crd_name,
    printer_columns,
    read_defaults,
    scale_paths,
    subresource_names,
    version_entry,
    version_schema,
)

__all__ = [
    "ScalePaths",
    "admit",
    "crd_name",
    "printer_columns",
    "read_defaults",
    "scale_paths",
    "subresource_names",
    "version_entry",
    "version_schema",
]
