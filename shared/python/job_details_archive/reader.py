"""Reads one job's details wherever they are: hot objects first, then the archive (format 1.0).

Standard library + boto3. See docs/archive-format.md ("Reading a job") for the algorithm this follows.
"""
import math
import os
import re
from datetime import datetime, timedelta, timezone

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from . import format as fmt
from .errors import (
    ArchiveError,
    ArchiveExpiredError,
    ConcurrentModificationError,
    CorruptObjectError,
    InvalidInputError,
    MissingIndexError,
    NeedsRestoreError,
    PartMissingError,
)

SEARCH_MONTHS = 24
_FLUSH = re.compile(r"^[A-Za-z0-9._-]{1,64}\.json\.gz$")
_WRITTEN = re.compile(r"(?:^|/)part-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[a-z0-9]{8}\.jsonl\.gz$")


def s3_client():
    """A boto3 S3 client from the environment (AWS_ENDPOINT_URL_S3 as `jobarchive up` prints it)."""
    return boto3.client(
        "s3",
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}),
    )


def _code(err):
    return err.response.get("Error", {}).get("Code") if isinstance(err, ClientError) else None


def _status(err):
    return err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") if isinstance(err, ClientError) else None


def _not_found(err):
    return _code(err) in ("NoSuchKey", "404", "NotFound") or _status(err) == 404


def _precondition_failed(err):
    return _code(err) in ("PreconditionFailed", "412") or _status(err) == 412


# Attempts at reading one month index of more than one GET, each from its first read (as the
# TypeScript reader's readMonthIndex): a rewrite between the reads costs one more.
INDEX_READ_ATTEMPTS = 3


class _Changed(Exception):
    """A later read of an object found another version (412 on If-Match) or none (404)."""


class _Ledger:
    def __init__(self):
        self.requests = 0
        self.bytes = 0
        self.parts = set()
        self.warnings = []
        # Part blocks an index read already fetched (a settled part's probed block).
        self.blocks = {}
        # Months read with neither the shop's own index nor the month's shared index.
        self.no_shared = set()
        # What could not be read (PartMissingError, CorruptObjectError, MissingIndexError): left out,
        # each named in a warning while anything else answers; with nothing else, the first is raised.
        self.damage = []

    def provenance(self, source):
        return {"source": source, "parts": sorted(self.parts), "requests": self.requests,
                "bytes": self.bytes, "warnings": list(self.warnings)}


class ArchiveReader:
    """`lookup` and `search` over one bucket. `s3` is a boto3 S3 client (default: from the environment).
    `retention_months`: the deployment's retentionMonths (0: forever) — a part past written + that
    many months is expired, never served (as the TypeScript reader's retentionMonths); `clock` its
    time source (an aware datetime; default now)."""

    def __init__(self, bucket, s3=None, search_months=SEARCH_MONTHS, restore_days=None, restore_tier="Bulk",
                 retention_months=0, clock=None):
        if not isinstance(bucket, str) or not bucket.strip():
            raise InvalidInputError("bucket", "must be a non-empty bucket name")
        if isinstance(retention_months, bool) or not isinstance(retention_months, int) \
                or not 0 <= retention_months <= 1200:
            raise InvalidInputError("retention_months", "must be an integer from 0 (forever) to 1200")
        self.retention_months = retention_months
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.bucket = bucket
        self.s3 = s3 or s3_client()
        self.search_months = search_months
        self.restore_days = restore_days
        self.restore_tier = restore_tier

    # --- S3 --------------------------------------------------------------------------------------

    def _get(self, ledger, key, byte_range=None):
        """(bytes, metadata, content range, ETag unquoted) or None when the object does not exist."""
        ledger.requests += 1
        try:
            out = self.s3.get_object(Bucket=self.bucket, Key=key, **({"Range": byte_range} if byte_range else {}))
        except ClientError as err:
            if _not_found(err):
                return None
            raise
        body = out["Body"].read()
        ledger.bytes += len(body)
        return body, out.get("Metadata") or {}, out.get("ContentRange"), (out.get("ETag") or "").strip('"')

    def _get_same(self, ledger, key, etag, byte_range=None):
        """A later read of an object, of the version a first read saw (If-Match its ETag, as the
        TypeScript reader's getRange): its bytes, or _Changed when it was rewritten (412) or removed
        (404) since — offsets of one version never index another."""
        ledger.requests += 1
        try:
            out = self.s3.get_object(Bucket=self.bucket, Key=key, **({"Range": byte_range} if byte_range else {}),
                                     **({"IfMatch": f'"{etag}"'} if etag else {}))
        except ClientError as err:
            if _precondition_failed(err) or _not_found(err):
                raise _Changed() from None
            raise
        body = out["Body"].read()
        ledger.bytes += len(body)
        return body

    def _list(self, ledger, prefix):
        token = None
        while True:
            ledger.requests += 1
            page = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix,
                                           **({"ContinuationToken": token} if token else {}))
            for o in page.get("Contents", []):
                yield o["Key"]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return

    def _expired(self, key):
        """ArchiveExpiredError when the part is past the retention horizon (no request), else None."""
        m = _WRITTEN.search(key) if self.retention_months > 0 else None
        if m is None:
            return None
        written = datetime(*map(int, m.groups()), tzinfo=timezone.utc)
        if self.clock() < written + timedelta(days=math.ceil(self.retention_months * 365.25 / 12)):
            return None
        return ArchiveExpiredError(key, self.retention_months, written.strftime("%Y-%m-%dT%H:%M:%S.000Z"))

    def _read_range(self, ledger, key, offset, length, restore=True):
        at = f"{key} bytes {offset}-{offset + length - 1}"
        expired = self._expired(key)
        if expired is not None:
            raise expired
        probed = ledger.blocks.get((key, offset, length))
        if probed is not None:
            ledger.parts.add(key)
            return probed
        try:
            got = self._get(ledger, key, f"bytes={offset}-{offset + length - 1}")
        except ClientError as err:
            if _code(err) == "InvalidObjectState":
                raise self._needs_restore(ledger, key, err, restore) from None
            if _status(err) == 416:
                raise CorruptObjectError(at, "range lies outside the part") from None
            raise
        if got is None:
            raise PartMissingError(key)
        if len(got[0]) != length:
            raise CorruptObjectError(at, f"expected {length} bytes, got {len(got[0])} (part shorter than its index says)")
        ledger.parts.add(key)
        return got[0]

    def _needs_restore(self, ledger, key, err, restore=True):
        storage_class = err.response.get("Error", {}).get("StorageClass")
        requested = False
        if self.restore_days and restore:
            ledger.requests += 1
            try:
                self.s3.restore_object(Bucket=self.bucket, Key=key, RestoreRequest={
                    "Days": self.restore_days, "GlacierJobParameters": {"Tier": self.restore_tier}})
                requested = True
            except ClientError as restore_err:
                requested = _code(restore_err) == "RestoreAlreadyInProgress"
                if not requested:
                    raise
        return NeedsRestoreError(key, storage_class, requested)

    # --- hot -------------------------------------------------------------------------------------

    def _hot(self, ledger, shop_id, job_id):
        """Flush payloads (key order) and platform data of the job's hot prefix; another shop's
        objects (their `shop-id` metadata) are left out."""
        prefix = f"{fmt.HOT_PREFIX}{job_id}/"
        flushes, platform_data, keys = [], None, []
        for key in sorted(self._list(ledger, prefix), key=lambda k: k.encode("utf-8")):
            name = key[len(prefix):]
            if name == fmt.PLATFORM_DATA_NAME:
                got = self._get(ledger, key)
                if got and got[1].get("shop-id", shop_id) == shop_id:
                    platform_data = fmt.loads_exact(got[0], key)
                    if not isinstance(platform_data, dict):
                        raise CorruptObjectError(key, "platform data must be a JSON object")
                    pd_key = key
                continue
            if "/" in name or not _FLUSH.match(name):
                continue
            got = self._get(ledger, key)
            if got is None or got[1].get("shop-id", shop_id) != shop_id:
                continue
            payload = fmt.loads_exact(fmt.gunzip_all(got[0], key), key)
            if not isinstance(payload, dict) or not all(f in payload for f in fmt.COUNT_ORDER):
                raise CorruptObjectError(key, "not a flush payload (chunk_ids, failed, skipped, conflict)")
            flushes.append(payload)
            keys.append(key)
        if platform_data is not None:
            keys.append(pd_key)
        return flushes, platform_data, keys

    # --- indexes ---------------------------------------------------------------------------------

    def _month_view(self, ledger, shop_id, job_id, month, whole=False):
        """(index key, the job's entries in the month, index model or None). `whole`: every entry
        (a search), not only the block that can hold `job_id`. An index larger than its first read is
        read in more GETs, each of the first read's version (If-Match); rewritten or removed between
        them, the month is read again from its first read, INDEX_READ_ATTEMPTS times at most, then
        ConcurrentModificationError names it."""
        key = fmt.month_index_key(shop_id, month)
        for _ in range(INDEX_READ_ATTEMPTS):
            got = self._get(ledger, key, None if whole else f"bytes=0-{fmt.INDEX_FIRST_READ_BYTES - 1}")
            if got is None:
                return self._shared_view(ledger, shop_id, job_id, month)
            try:
                index = self._read_index(ledger, key, job_id, got)
                break
            except _Changed:
                continue
        else:
            raise ConcurrentModificationError(key, INDEX_READ_ATTEMPTS)
        if index["shop_id"] != shop_id or index["month"] != month:
            raise CorruptObjectError(key, f"index names shop {index['shop_id']} month {index['month']}")
        found = list(index["jobs"].get(job_id, []))
        if not whole:
            settled = self._settled(ledger, index, job_id, key)
            if settled:
                order = {p["name"]: i for i, p in enumerate(index["parts"])}
                found = sorted(found + settled, key=lambda e: order[e["part"]])
        return key, found, index

    def _read_index(self, ledger, key, job_id, got):
        """The index model from its first read `got` (whole, or its first INDEX_FIRST_READ_BYTES), plus
        the job's entry block (or the whole index) read of the same version: _Changed when it is gone."""
        first, _, content_range, etag = got
        total = int(content_range.rsplit("/", 1)[1]) if content_range else len(first)
        if len(first) >= total:
            return fmt.parse_month_index(first, key)
        head = fmt.member_length(first)
        if head is None:
            return fmt.parse_month_index(self._get_same(ledger, key, etag), key)
        header, blocks = fmt.parse_index_header(first[:head], key)
        block = fmt.block_of(blocks, job_id) if blocks else None
        members = []
        # The job's entry block lies past the first read and every part has a block directory
        # (settled parts): the directory names the record block instead (3 requests at any size).
        every_dir = all(isinstance(p, dict) and "dir" in p for p in header.get("parts") or [])
        past = block is not None and head + block["offset"] + block["length"] > len(first)
        if block is not None and not (past and every_dir):
            start, end = head + block["offset"], head + block["offset"] + block["length"]
            data = first[start:end] if end <= len(first) else \
                self._get_same(ledger, key, etag, f"bytes={start}-{end - 1}")
            members.append(fmt.loads_exact(fmt.gunzip_all(data, key), key))
        return fmt.index_from_members(header, members, key)

    def _settled(self, ledger, index, job_id, key):
        """The job's entries in the month's settled parts: one ranged GET of each candidate block (kept
        for the record read), the entry from the record. A part in a Glacier class gets its restore
        requested (restore_days) and, once every candidate was tried, NeedsRestoreError names it: whether
        the job is there cannot be told without it, never "not archived". A missing part or a damaged
        block is left out (ledger.damage: named, as lookup decides); the other parts still answer (the
        TypeScript reader's readSettled `left`)."""
        found, needs = [], None
        for c in fmt.settled_candidates(index, job_id):
            pkey = c["part"]["key"]
            expired = self._expired(pkey)
            if expired is not None:
                ledger.damage.append(expired)
                continue
            offset, length = c["range"]
            # A job's platform data in the block just before (a job line longer than a block): one GET.
            pd = c["pd_range"]
            start = pd[0] if pd is not None and pd[0] + pd[1] == offset else offset
            at = f"{pkey} bytes {offset}-{offset + length - 1}"
            try:
                got = self._get(ledger, pkey, f"bytes={start}-{offset + length - 1}")
            except ClientError as err:
                if _code(err) == "InvalidObjectState":
                    needs = needs or self._needs_restore(ledger, pkey, err)
                    continue
                if _status(err) == 416:
                    ledger.damage.append(CorruptObjectError(at, "range lies outside the part"))
                    continue
                raise
            if got is None:
                ledger.damage.append(PartMissingError(pkey))
                continue
            if len(got[0]) != offset + length - start:
                ledger.damage.append(CorruptObjectError(
                    at, f"expected {offset + length - start} bytes, got {len(got[0])} (part shorter than its index says)"))
                continue
            data = got[0][offset - start:]
            try:
                entry = fmt.settled_entry(c, fmt.read_block(data, at), job_id, key)
            except CorruptObjectError as err:
                ledger.damage.append(err)
                continue
            if entry is not None:
                if start != offset:
                    ledger.blocks[(pkey, start, offset - start)] = got[0][:offset - start]
                ledger.blocks[(pkey, offset, length)] = data
                found.append(entry)
        if needs is not None:
            raise needs
        return found

    def _shared_view(self, ledger, shop_id, job_id, month):
        key = fmt.shared_index_key(month)
        got = self._get(ledger, key)
        if got is None:
            ledger.no_shared.add(month)
            return key, [], None
        view = fmt.parse_shared_index(got[0], key, shop_id)
        if view is None:
            return key, [], None
        return key, view["jobs"].get(job_id, []), view

    def _months(self, ledger, shop_id, known, every=False):
        """The months to read, newest first: `known`, else the newest search_months ones (every: all,
        for a search)."""
        if known is not None:
            return [known]
        months = set()
        own = re.compile(r"^job-details-index/" + re.escape(shop_id) + r"/(\d{4}-\d{2})/index\.json$")
        shared = re.compile(r"^job-details-index/_shared/(\d{4}-\d{2})/shared\.json$")
        for k in self._list(ledger, f"{fmt.INDEX_PREFIX}{shop_id}/"):
            m = own.match(k)
            if m:
                months.add(m.group(1))
        for k in self._list(ledger, f"{fmt.INDEX_PREFIX}{fmt.SHARED}/"):
            m = shared.match(k)
            if m:
                months.add(m.group(1))
        # Months holding the shop's parts: one whose index is lost is read (and named), never skipped.
        part = re.compile(r"^job-details-cold/" + re.escape(shop_id) + r"/(\d{4}-\d{2})/[^/]+\.jsonl\.gz$")
        for k in self._list(ledger, f"{fmt.COLD_PREFIX}{shop_id}/"):
            m = part.match(k)
            if m:
                months.add(m.group(1))
        return sorted(months, reverse=True)[: None if every else self.search_months]

    def _check_not_lost(self, ledger, shop_id, month):
        """A month with no index (own or shared view) but committed parts of the shop: the index is
        lost. A part with an intent under the index's pending/ is a first archival still in flight."""
        prefix = f"{fmt.COLD_PREFIX}{shop_id}/{month}/"
        pending = f"{fmt.INDEX_PREFIX}{shop_id}/{month}/pending/"
        staged = {k[len(pending):-len(".json")] for k in self._list(ledger, pending) if k.endswith(".json")}
        parts = [k for k in self._list(ledger, prefix)
                 if k.endswith(".jsonl.gz") and k[len(prefix):] not in staged]
        if parts:
            raise MissingIndexError(fmt.month_index_key(shop_id, month), len(parts))

    def _lost_shared(self, ledger, months):
        """Months whose shared index is lost while committed shared parts remain (the TypeScript
        reader's lostSharedIndexes): a packed shop's only record of its archivals there. `months`:
        those read with neither index (a List of each one's shared parts, + 1 of its intents when
        there are parts); None (months unknown): the shared index prefix and the shared parts walked.
        A part whose intent is under the shared index's pending/ is a first archival in flight."""
        shared_parts = f"{fmt.COLD_PREFIX}{fmt.SHARED}/"
        shared_index = f"{fmt.INDEX_PREFIX}{fmt.SHARED}/"
        part = re.compile(r"^" + re.escape(shared_parts) + r"(\d{4}-\d{2})/(part-[^/]+\.jsonl\.gz)$")
        intent = re.compile(r"^" + re.escape(shared_index) + r"(\d{4}-\d{2})/pending/([^/]+)\.json$")
        lost = {}
        if months is not None:
            for month in months:
                parts = [m.group(2) for m in map(part.match, self._list(ledger, f"{shared_parts}{month}/")) if m]
                if parts:
                    staged = {m.group(2) for m in map(intent.match, self._list(ledger, f"{shared_index}{month}/pending/")) if m}
                    n = len([p for p in parts if p not in staged])
                    if n:
                        lost[month] = n
        else:
            indexed, staged = set(), set()
            for k in self._list(ledger, shared_index):
                m = re.match(r"^" + re.escape(shared_index) + r"(\d{4}-\d{2})/shared\.json$", k)
                if m:
                    indexed.add(m.group(1))
                m = intent.match(k)
                if m:
                    staged.add((m.group(1), m.group(2)))
            for k in self._list(ledger, shared_parts):
                m = part.match(k)
                if m and m.group(1) not in indexed and (m.group(1), m.group(2)) not in staged:
                    lost[m.group(1)] = lost.get(m.group(1), 0) + 1
        return [CorruptObjectError(
            fmt.shared_index_key(month),
            f"shared index is missing while {n} committed shared part(s) exist under {shared_parts}{month}/: "
            f"the jobs of shops packed there cannot be read; no command rebuilds a shared index yet - restore "
            f"the object (e.g. from a bucket version) or keep the jobs' hot copies",
        ) for month, n in sorted(lost.items(), reverse=True)]

    # --- lookup ----------------------------------------------------------------------------------

    def lookup(self, shop_id, job_id, completed_at=None):
        """Everything known about one job, hot objects first, then every archival found.

        Returns {"shop_id", "job_id", "details", "platform_data", "archived_row", "archivals",
        "hot_keys", "details_source", "platform_data_source", "provenance"}. `details` is None when
        no flush and no archival holds any listing or chunk ("no details": the job read the same way
        while hot). Numbers are exact (ints of any size; other numbers keep their JSON text).
        Raises NeedsRestoreError, MissingIndexError, PartMissingError, CorruptObjectError,
        ArchiveExpiredError, UnsupportedFormatError: a damaged or missing index is never read as "no
        archival". ConcurrentModificationError: a month index past its first read was rewritten
        between its reads on each of 3 attempts (never read across two versions). A lost or damaged
        index, a missing or expired part (retention_months), a damaged block (a settled part's, a
        record's, platform data's) raises only when nothing else answers (hot objects, other
        archivals); otherwise what it holds is left out and it is named in provenance.warnings (as the
        TypeScript reader does).
        InvalidInputError (before any request) for an id or a `completed_at` the TypeScript reader
        refuses too: an ISO-8601 string (or aware datetime) with a UTC offset.
        """
        fmt.check_shop(shop_id)
        fmt.check_job(job_id)
        known = None if completed_at is None else fmt.month_of(completed_at)  # before any request
        ledger = _Ledger()
        flushes, hot_pd, hot_keys = self._hot(ledger, shop_id, job_id)
        hot = bool(flushes) or hot_pd is not None
        entries, needs = [], None
        for month in self._months(ledger, shop_id, known):
            # A month whose index is damaged or lost, or whose settled part needs a restore, does not
            # stop the others (the TypeScript reader's readIndexes): every part gets its restore asked.
            try:
                index_key, found, index = self._month_view(ledger, shop_id, job_id, month)
                if index is None:
                    self._check_not_lost(ledger, shop_id, month)
            except (CorruptObjectError, MissingIndexError) as err:
                ledger.damage.append(err)
                continue
            except NeedsRestoreError as err:
                needs = needs or err
                continue
            entries.extend((month, pos, e) for pos, e in enumerate(found))
        if needs is not None:
            raise needs
        entries.sort(key=lambda t: (_instant(t[2]["committed_at"]), t[0], t[1]))
        late = _late_hot_objects(completed_at, entries, hot_keys)
        if late:
            ledger.warnings.append(late)
        if not hot:
            # Nothing hot: a lost shared index (a packed shop's only record there) is named, never
            # "none". Months known: each read with neither index; unknown: only when nothing was found.
            if known is not None:
                lost = self._lost_shared(ledger, sorted(ledger.no_shared, reverse=True)) if ledger.no_shared else []
            else:
                lost = [] if entries or ledger.damage else self._lost_shared(ledger, None)
            ledger.damage.extend(lost)
        # The records: an archival that cannot be read (damaged, out of its part's range, missing) is
        # left out while anything else answers, as in the TypeScript reader's readMembers.
        records = []
        for month, _, e in entries:
            shared = shop_id if e["part_key"].startswith(f"{fmt.COLD_PREFIX}{fmt.SHARED}/") else None
            where = f"{e['part_key']} bytes {e['block'][0]}-{sum(e['block']) - 1}"
            try:
                data = self._read_range(ledger, e["part_key"], *e["block"])
                block = fmt.read_block(data, where, shared)
                records.append((e, month, fmt.find_record(block, where, "job", job_id, shop_id)))
            except (CorruptObjectError, PartMissingError, ArchiveExpiredError) as err:
                ledger.damage.append(err)
            except NeedsRestoreError as err:
                needs = needs or err
        if needs is not None:
            raise needs
        archived_pd = None
        if hot_pd is None:
            # The newest archival with platform data (its entry says so): its record names the ref.
            latest = next((t for t in reversed(entries) if t[2]["platform_data"] is not None), None)
            rec = next((r for e, _, r in records if latest is not None and e is latest[2]), None)
            if rec is not None:
                e = latest[2]
                shared = shop_id if e["part"] and e["part_key"].startswith(f"{fmt.COLD_PREFIX}{fmt.SHARED}/") else None
                r = e["platform_data"]
                where = f"{e['part_key']} bytes {r[0]}-{r[0] + r[1] - 1}"
                try:
                    ref = rec.get("platform_data_ref")
                    if ref is None:
                        raise CorruptObjectError(e["part_key"], "the job record names no platform data")
                    block = fmt.read_block(self._read_range(ledger, e["part_key"], *r), where, shared)
                    archived_pd = fmt.find_record(block, where, "platform_data", ref, shop_id)["data"]
                except (CorruptObjectError, PartMissingError, ArchiveExpiredError) as err:
                    ledger.damage.append(err)
        # Whatever could not be read is named in a warning while anything else answers (hot objects,
        # other archivals); with nothing else, it is the error (never "none").
        if ledger.damage:
            if not hot and not records and archived_pd is None:
                raise ledger.damage[0]
            seen = set()
            for err in ledger.damage:
                if id(err) not in seen:
                    seen.add(id(err))
                    ledger.warnings.append(_warning(err))
        with_details = [rec["details"] for _, _, rec in records if not fmt.is_empty_details(rec["details"])]
        if with_details or flushes:
            details = fmt.merge_details(with_details + flushes)
            details_source = _source(bool(flushes), bool(records))
        else:
            details, details_source = None, "archive" if records else "none"
        platform_data = hot_pd if hot_pd is not None else archived_pd
        pd_source = "hot" if hot_pd is not None else "archive" if archived_pd is not None else "none"
        newest = records[-1][2] if records else None
        # Every archival the indexes name, oldest first; one whose record could not be read (named in
        # a warning) has status None, as the TypeScript reader lists it.
        read = {id(e): rec for e, _, rec in records}
        return {
            "shop_id": shop_id,
            "job_id": job_id,
            "details": details,
            "platform_data": platform_data,
            "archived_row": fmt.expand_row(newest, shop_id) if newest else None,
            "archivals": [{
                "month": month, "part_key": e["part_key"],
                "status": fmt.record_status(read[id(e)]) if id(e) in read else None,
                "completed_at": e["completed_at"], "committed_at": e["committed_at"], "deleted_at": e["deleted_at"],
            } for month, _, e in entries],
            "hot_keys": hot_keys,
            "details_source": details_source,
            "platform_data_source": pd_source,
            "provenance": ledger.provenance(_combine(details_source, pd_source)),
        }


    # --- search ----------------------------------------------------------------------------------

    def search(self, shop_id, doc_id):
        """The archived jobs of a shop whose details list a document, newest completion first:
        {"jobs": [{job_id, status, completed_at, month, part_key, listings: [{kind, reason}]}],
        "provenance": {requests, bytes, warnings, parts_not_searched}}. Per month the index (or the
        shop's view), each part's filters member (one ranged GET), then only the blocks a filter
        matches; every month of the shop (search_months bounds a lookup only). Hot (running or not yet
        archived) jobs are not searched here.

        Never hides, as the TypeScript findDocument: a month whose index is lost (with its repair) or
        damaged, a lost shared index, a part missing, damaged or expired are each named in
        provenance.warnings while the other months and parts are searched; a part in a Glacier class
        is named in parts_not_searched (its filters need a restore; nothing is restored here)."""
        fmt.check_shop(shop_id)
        if not isinstance(doc_id, str) or not doc_id:
            raise InvalidInputError("doc_id", "must be a non-empty string")
        ledger = _Ledger()
        found, not_searched = {}, []
        for err in self._lost_shared(ledger, None):
            ledger.warnings.append(f"jobs of shops packed there not searched: {err}")
        for month in self._months(ledger, shop_id, None, every=True):
            try:
                _, _, index = self._month_view(ledger, shop_id, "", month, whole=True)
                if index is None:
                    self._check_not_lost(ledger, shop_id, month)
                    continue
            except (CorruptObjectError, MissingIndexError) as err:
                ledger.warnings.append(f"month {month} not searched: {err}")
                continue
            for part in index["parts"]:
                if part["filters"] is None:
                    continue
                key = part["key"]
                # Past the retention horizon: expired, served by no reader (no GET of its filters).
                expired = self._expired(key)
                if expired is not None:
                    ledger.warnings.append(f"part not searched: {expired}")
                    continue
                # One part that cannot be read is named; the month's other parts are searched still.
                try:
                    data = self._read_range(ledger, key, *part["filters"], restore=False)
                    filters = fmt.parse_filters_member(data, key, shop_id, part["shared"])
                except NeedsRestoreError:
                    not_searched.append(key)
                    continue
                except (CorruptObjectError, PartMissingError) as err:
                    ledger.warnings.append(f"part not searched: {err}")
                    continue
                try:
                    self._search_part(ledger, shop_id, doc_id, month, index, part, filters, found)
                except (CorruptObjectError, PartMissingError) as err:
                    ledger.warnings.append(f"part not searched (whole or in part): {err}")
        jobs = sorted(found.values(), key=lambda j: j["job_id"])
        prov = ledger.provenance("archive")
        return {"jobs": sorted(jobs, key=lambda j: j["completed_at"], reverse=True), "provenance": {
            "requests": prov["requests"], "bytes": prov["bytes"], "warnings": prov["warnings"],
            "parts_not_searched": not_searched}}

    def _search_part(self, ledger, shop_id, doc_id, month, index, part, filters, found):
        """The blocks of one part whose filter matches `doc_id`: the jobs listing it, into `found`."""
        key = part["key"]
        for offset, length, kind, bits, k, docs in filters:
            if not fmt.block_may_contain(key, offset, length, kind, bits, doc_id, k, docs):
                continue
            where = f"{key} bytes {offset}-{offset + length - 1}"
            block = fmt.read_block(self._read_range(ledger, key, offset, length, restore=False), where,
                                   shop_id if part["shared"] else None)
            for line in block.split(b"\n"):
                if not line:
                    continue
                rec = fmt.loads_exact(line, where)
                if rec.get("type") != "job":
                    continue
                listings = fmt.document_listings(fmt.expand_details(rec.get("details") or {}, where), doc_id)
                if not listings:
                    continue
                if part["settled"]:
                    # A settled part: every record is an archival, its completion the record's.
                    completed = fmt.record_completion(rec)
                else:
                    entry = next((e for e in index["jobs"].get(rec["job_id"], []) if e["part"] == part["name"]), None)
                    if entry is None:
                        continue  # a record its index does not point at (a concurrent duplicate)
                    completed = entry["completed_at"]
                at = (rec["job_id"], completed)
                seen = found.setdefault(at, {
                    "job_id": rec["job_id"], "status": fmt.record_status(rec), "completed_at": completed,
                    "month": month, "part_key": key, "listings": [],
                })
                for item in listings:
                    if item not in seen["listings"]:
                        seen["listings"].append(item)


def _warning(err):
    if isinstance(err, ArchiveExpiredError):
        return f"archival left out: {err}"
    if isinstance(err, PartMissingError):
        return f"archive part missing, left out: {err}"
    if isinstance(err, MissingIndexError):
        return f"archive index lost, left out: {err}"
    return f"archive damaged, left out: {err}"


def _late_hot_objects(completed_at, entries, hot_keys):
    """Hot objects of a completion archived with its hot copies deleted were written after that
    archival (a late flush): merged in like any hot object, and named, since no archive holds them
    yet (the TypeScript reader's lateHotObjects). Only with the completion known."""
    if completed_at is None or not entries:
        return None
    newest = entries[-1][2]
    asked = completed_at.timestamp() if hasattr(completed_at, "timestamp") else _instant(completed_at)
    if _instant(newest["completed_at"]) != asked or newest["deleted_at"] is None:
        return None
    late = [k for k in hot_keys if k not in set(newest.get("sources") or [])]
    if not late:
        return None
    return (f"{len(late)} hot object(s) found after this completion was archived in {newest['part_key']} and its "
            f"hot copies deleted ({newest['deleted_at']}), written after that archival: merged in; no archive "
            f"holds them yet: {', '.join(late)}")


def _instant(iso):
    from datetime import datetime

    try:
        return datetime.fromisoformat(fmt._trim_fraction(iso.replace("Z", "+00:00"))).timestamp()
    except (ValueError, AttributeError):
        return float("nan")


def _source(hot, archive):
    return "both" if hot and archive else "hot" if hot else "archive" if archive else "none"


def _combine(*sources):
    return _source(any(s in ("hot", "both") for s in sources), any(s in ("archive", "both") for s in sources))


def lookup(shop_id, job_id, completed_at=None, bucket=None, s3=None):
    """The job (see ArchiveReader.lookup); `bucket` defaults to $ECOM_JOB_DETAILS_BUCKET."""
    bucket = bucket or os.environ.get("ECOM_JOB_DETAILS_BUCKET")
    if not bucket:
        raise ArchiveError("no bucket: pass bucket= or set ECOM_JOB_DETAILS_BUCKET")
    return ArchiveReader(bucket, s3=s3).lookup(shop_id, job_id, completed_at)
