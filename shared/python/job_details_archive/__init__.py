"""Reads job details archived by job-details-archive (archive format 1.0), with hot-first fallback.

    from job_details_archive import lookup
    job = lookup("acme.myshopify.com", "k3jqxr2m7zaba", completed_at="2026-03-14T09:12:00+00:00")

Standard library + boto3. The format is docs/archive-format.md; conformance vectors in docs/vectors/.
"""
from .errors import (
    ArchiveError,
    ArchiveExpiredError,
    ConcurrentModificationError,
    CorruptObjectError,
    InvalidInputError,
    MissingIndexError,
    NeedsRestoreError,
    PartMissingError,
    UnsupportedFormatError,
)
from .format import canonical_json
from .reader import ArchiveReader, lookup

__all__ = [
    "ArchiveError",
    "ArchiveExpiredError",
    "ArchiveReader",
    "ConcurrentModificationError",
    "CorruptObjectError",
    "InvalidInputError",
    "MissingIndexError",
    "NeedsRestoreError",
    "PartMissingError",
    "UnsupportedFormatError",
    "canonical_json",
    "lookup",
]
