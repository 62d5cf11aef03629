"""The errors the reader raises on purpose. Every one names the object and what is wrong."""


class ArchiveError(Exception):
    """Base class: anything the archive reader refuses to guess about."""


class InvalidInputError(ArchiveError, ValueError):
    """An argument of the wrong shape (a shop or job id, `completed_at`, a bucket name), raised before
    any request, naming the argument (the TypeScript reader's InvalidInputError). Also a ValueError."""

    def __init__(self, field, reason):
        super().__init__(f"invalid {field}: {reason}")
        self.field = field
        self.reason = reason


class CorruptObjectError(ArchiveError):
    """An object read back that is not what the archiver writes (damaged index, part or hot object)."""

    def __init__(self, key, reason):
        super().__init__(f"corrupt object {key}: {reason}")
        self.key = key
        self.reason = reason


class UnsupportedFormatError(ArchiveError):
    """An object in a format version this reader does not read (a pre-1.0 local bucket, or a newer major)."""

    def __init__(self, key, fmt, fix):
        super().__init__(f"{key} is in format {fmt}: {fix}")
        self.key = key
        self.format = fmt


class MissingIndexError(ArchiveError):
    """A month holds archive parts of the shop but no index names them: the index is lost or unreadable.

    The parts are not read without their index (their commit record). `jobarchive reindex` rebuilds it.
    """

    def __init__(self, key, parts):
        super().__init__(
            f"month index {key} is missing while {parts} part(s) of that shop-month exist: "
            f"rebuild it with `jobarchive reindex` before reading this month"
        )
        self.key = key
        self.parts = parts


class NeedsRestoreError(ArchiveError):
    """An archive part sits in a Glacier class that must be restored before a ranged GET can read it."""

    def __init__(self, key, storage_class, restore_requested):
        what = "a restore was requested; retry once it completes (hours)" if restore_requested else (
            "request a restore (S3 RestoreObject, or lookup(..., restore=True)) and retry once it completes")
        super().__init__(f"archive part {key} is in {storage_class or 'a Glacier class'}: {what}")
        self.key = key
        self.storage_class = storage_class
        self.restore_requested = restore_requested


class PartMissingError(ArchiveError):
    """A part its committed index names does not exist (expired by retention, or deleted by hand)."""

    def __init__(self, key):
        super().__init__(f"archive part {key} is committed in its month index but does not exist "
                         f"(expired by the retention rule, or removed outside the archiver)")
        self.key = key


class ArchiveExpiredError(ArchiveError):
    """A part past the retention horizon (written + retention_months): not served even while the
    lifecycle rule has not removed it yet (the TypeScript reader's ArchiveExpiredError)."""

    def __init__(self, key, retention_months, written_at):
        super().__init__(f"archive {key} (written {written_at}) expired: it is past the "
                         f"{retention_months}-month retention")
        self.key = key
        self.retention_months = retention_months
        self.written_at = written_at


class ConcurrentModificationError(ArchiveError):
    """An object read in more than one GET (a month index past its first read) changed or went away
    between the reads on every attempt (S3 412 PreconditionFailed on If-Match, or 404): named, never
    read across two versions (the TypeScript reader's reads carry If-Match the same way)."""

    def __init__(self, key, attempts):
        super().__init__(f"{key} changed while it was read ({attempts} attempts, each rewritten or removed "
                         f"between its first read and the next): concurrent archivals are rewriting it; retry")
        self.key = key
        self.attempts = attempts
