"""Archive format 1.0, pure byte logic (no I/O): docs/archive-format.md is the specification.

Everything here takes bytes already read and returns plain Python values, or raises
CorruptObjectError / UnsupportedFormatError naming the object.
"""
import calendar
import json
import math
import re
import zlib
from datetime import datetime, timezone

from .errors import CorruptObjectError, InvalidInputError, UnsupportedFormatError

HOT_PREFIX = "job-details/"
COLD_PREFIX = "job-details-cold/"
INDEX_PREFIX = "job-details-index/"
SHARED = "_shared"
FORMAT_MAJOR = 1
FLUSH_SUFFIX = ".json.gz"
PLATFORM_DATA_NAME = "platform-data.json"
INDEX_FIRST_READ_BYTES = 64 * 1024
COUNT_ORDER = ("chunk_ids", "failed", "skipped", "conflict")

_FORMAT = re.compile(r"^job-details-archive/([a-z-]+)@(\d+)(?:\.(\d+))?$")
_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$", re.ASCII)
_SHOP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$")
_PART_NAME = re.compile(r"^part-\d{8}T\d{6}Z-[a-z0-9]{8}\.jsonl\.gz$")
_SEGMENT = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def check_format(kind, value, key):
    """Format 1.x of `kind`, or an error: a pre-1.0 string (no minor) or another major is refused."""
    m = _FORMAT.match(value) if isinstance(value, str) else None
    if not m or m.group(1) != kind:
        raise CorruptObjectError(key, f"not a job-details-archive/{kind}@{FORMAT_MAJOR}.0 document ({value!r})")
    if m.group(3) is None:
        raise UnsupportedFormatError(key, value, "written by a pre-1.0 build of job-details-archive, which "
                                     "this reader does not read; rebuild the local data")
    if int(m.group(2)) != FORMAT_MAJOR:
        raise UnsupportedFormatError(key, value, f"this reader reads format {FORMAT_MAJOR}; upgrade it")
    return FORMAT_MAJOR


# --- exact JSON -----------------------------------------------------------------------------------

class ExactInt(int):
    """An integer as read, with its JSON text (Python ints are exact at any size)."""

    text = None


class ExactFloat(float):
    """A non-integer number as read: usable as a float, written back as its exact JSON text."""

    text = None


def _int(text):
    v = ExactInt(int(text))
    v.text = text
    return v


def _float(text):
    v = ExactFloat(float(text))
    v.text = text
    return v


def loads_exact(data, key):
    """JSON with every number kept exactly as written (ints as int, others as ExactFloat)."""
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as err:
        raise CorruptObjectError(key, f"not JSON: {err}") from None


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _utf16(s):
    return s.encode("utf-16-be", "surrogatepass")


def canonical_json(value):
    """Keys sorted (UTF-16 code units, as the TypeScript library sorts them), no spaces, numbers as read.

    The same bytes the TypeScript library's canonicalJson writes for the same value.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (ExactInt, ExactFloat)) and value.text is not None:
        return value.text
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value != int(value) else str(int(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(
            json.dumps(k, ensure_ascii=False) + ":" + canonical_json(value[k]) for k in sorted(value, key=_utf16)
        ) + "}"
    raise TypeError(f"not JSON: {type(value).__name__}")


# --- keys -----------------------------------------------------------------------------------------

def check_shop(shop_id):
    if not isinstance(shop_id, str) or not _SHOP.match(shop_id) or shop_id == SHARED:
        raise InvalidInputError("shop id", f"{shop_id!r} is not a shop id (ASCII letters, digits, '.', '_', '-')")
    return shop_id


def check_job(job_id):
    if not isinstance(job_id, str) or not _SEGMENT.match(job_id) or job_id in (".", ".."):
        raise InvalidInputError("job id", f"{job_id!r} is not a job id (1-128 ASCII letters, digits, '.', '_', '-')")
    return job_id


def month_index_key(shop_id, month):
    return f"{INDEX_PREFIX}{shop_id}/{month}/index.json"


def shared_index_key(month):
    return f"{INDEX_PREFIX}{SHARED}/{month}/shared.json"


def check_month(month):
    """`yyyy-mm` with the month 01–12 (as the TypeScript library's validateMonth), or ValueError naming it."""
    if not isinstance(month, str) or not _MONTH.match(month):
        raise ValueError(f"invalid month {json.dumps(month)}: expected yyyy-mm (month 01-12)")
    return month


def month_start_ms(month):
    """Unix milliseconds of the start of `month` (UTC); ValueError naming anything not `yyyy-mm`."""
    m = _MONTH.match(check_month(month))
    return calendar.timegm((int(m.group(1)), int(m.group(2)), 1, 0, 0, 0)) * 1000


def part_key(shop_id, month, name, shared=False):
    check_month(month)
    if not _PART_NAME.match(name or ""):
        raise ValueError(f"invalid part name {name!r}")
    return f"{COLD_PREFIX}{SHARED if shared else shop_id}/{month}/{name}"


# The TypeScript package's one timestamp grammar (shared/time.ts): an explicit UTC offset is required.
_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$",
    re.ASCII)


def month_of(value, field="completed_at"):
    """`2026-03-14T09:12:00+00:00` → `2026-03` (the UTC month; offsets are converted). Accepts what the
    TypeScript reader accepts (shared/time.ts), and an aware datetime; anything else, a time without a
    UTC offset included (its month depends on a timezone nobody wrote down), is an InvalidInputError
    naming `field`, raised before any request."""
    from datetime import timedelta

    def fail(reason):
        return InvalidInputError(field, reason)

    if isinstance(value, datetime):
        if value.utcoffset() is None:
            raise fail(f"{value.isoformat()} has no UTC offset (expected an aware datetime)")
        at = value.astimezone(timezone.utc)
        return f"{at.year:04d}-{at.month:02d}"
    if not isinstance(value, str):
        raise fail(f"expected an ISO-8601 timestamp string, got {value!r}")
    quoted = json.dumps(value)[:80]
    m = _TIMESTAMP.match(value)
    if not m:
        no_zone = re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?$", value, re.ASCII)
        raise fail(f"{quoted} has no UTC offset (expected Z or ±HH:MM)" if no_zone
                   else f"{quoted} is not an ISO-8601 timestamp with a UTC offset")
    y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
    s = int(m.group(6) or 0)
    try:
        day = datetime(y, mo, d, tzinfo=timezone.utc)
    except ValueError:
        raise fail(f"{quoted} names a date that does not exist") from None
    if h > 23 or mi > 59 or s > 59:
        raise fail(f"{quoted} names a time that does not exist")
    offset = 0
    if m.group(8) is None:
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            raise fail(f"{quoted} has an impossible UTC offset")
        offset = (-1 if m.group(9) == "-" else 1) * (oh * 60 + om)
    try:  # the fraction cannot move the instant across a month boundary: it is left out
        at = day + timedelta(minutes=h * 60 + mi - offset, seconds=s)
    except OverflowError:
        raise fail(f"{quoted} is outside the years 0001-9999 in UTC") from None
    return f"{at.year:04d}-{at.month:02d}"


def _trim_fraction(text):
    # Python < 3.11 takes at most 6 fraction digits.
    return re.sub(r"(\.\d{6})\d+", r"\1", text)


# --- gzip -----------------------------------------------------------------------------------------

def gunzip_all(data, key):
    """Every gzip member of `data`, inflated and concatenated."""
    out = []
    rest = bytes(data)
    try:
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(d.decompress(rest))
            if not d.eof:
                raise zlib.error("truncated gzip member")
            rest = d.unused_data
    except zlib.error as err:
        raise CorruptObjectError(key, f"not gzip: {err}") from None
    return b"".join(out)


def member_length(data):
    """Length of the gzip member at the start of `data`, or None when it is not all there."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        d.decompress(bytes(data))
    except zlib.error:
        return None
    return len(data) - len(d.unused_data) if d.eof else None


# --- month index ----------------------------------------------------------------------------------

def _count(n):
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def parse_index_header(member, key):
    """The header member of a month index: (header dict, blocks list)."""
    header = loads_exact(gunzip_all(member, key), key)
    if not isinstance(header, dict):
        raise CorruptObjectError(key, "index header is not an object")
    check_format("index", header.get("format"), key)
    blocks = header.get("blocks", [])
    if not isinstance(blocks, list):
        raise CorruptObjectError(key, "index blocks must be a list")
    return header, blocks


_YEAR_10000 = calendar.timegm((10000 - 1, 12, 31, 0, 0, 0)) * 1000 + 86_400_000


def completion_of(month, stored):
    """An entry's completion from its stored `completed`: text as is, or whole milliseconds from the
    start of the index's month (UTC) as `YYYY-MM-DDTHH:MM:SS.mmmZ`; None for anything else."""
    if isinstance(stored, str):
        return stored
    # A JSON number of whole value (`1`, `1.0`, `1e3`): the TypeScript reader cannot tell them apart.
    whole = isinstance(stored, float) and math.isfinite(stored) and stored.is_integer()
    if not (whole or isinstance(stored, int)) or isinstance(stored, bool):
        return None
    try:
        start = month_start_ms(month)
    except ValueError:
        return None
    t = start + int(stored)
    if not 0 <= t < _YEAR_10000:
        return None  # 1970 to 9999 only, as the writer encodes
    at = datetime.fromtimestamp(t // 1000, tz=timezone.utc)
    return f"{at.strftime('%Y-%m-%dT%H:%M:%S')}.{t % 1000:03d}Z"


def _json_named(obj, field):
    """A stored field's value as its JSON text (numbers as written), or `absent`: for error messages."""
    if field not in obj:
        return "absent"
    v = obj[field]
    text = getattr(v, "text", None)
    return text if text is not None else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def block_of(blocks, job_id):
    """The block (by job id range, code-point order) that would hold `job_id`, or None."""
    for b in blocks:
        if b["first"] <= job_id <= b["last"]:
            return b
    return None


def index_from_members(header, job_blocks, key, expect_format=True):
    """The model of a month index (or a shared index's view) from its header and the job blocks read.

    Returns {"shop_id", "month", "parts": [part], "jobs": {job_id: [entry]}} where every part has
    `key`, `size`, `blocks` (byte ranges) and every entry its part name, block range and
    platform-data block range (or None), with the defaults of the spec filled in.
    """
    if expect_format:
        check_format("index", header.get("format"), key)
    shop_id, month, parts = header.get("shop_id"), header.get("month"), header.get("parts")
    if not isinstance(shop_id, str) or not isinstance(month, str) or not isinstance(parts, list):
        raise CorruptObjectError(key, "index needs shop_id, month and parts")
    jobs = dict(header.get("jobs") or {})
    for b in job_blocks:
        if not isinstance(b, dict) or not isinstance(b.get("jobs"), dict):
            raise CorruptObjectError(key, "an index block must be {\"jobs\": {...}}")
        jobs.update(b["jobs"])
    model_parts = []
    for i, p in enumerate(parts):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not _count(p.get("size")):
            raise CorruptObjectError(key, f"part {i} needs a name and a size")
        filters = p.get("filters_bytes")
        if filters is not None and (not _count(filters) or filters == 0 or filters >= p["size"]):
            raise CorruptObjectError(key, f"part {p['name']}: filters_bytes must be a length within the part")
        lengths = p.get("block_bytes", [p["size"] - (filters or 0)])
        if not isinstance(lengths, list) or not all(_count(n) and n > 0 for n in lengths):
            raise CorruptObjectError(key, f"part {p['name']} needs block_bytes, a list of lengths")
        ranges, at = [], 0
        for n in lengths:
            ranges.append((at, n))
            at += n
        if at > p["size"] - (filters or 0):
            raise CorruptObjectError(key, f"blocks of part {p['name']} run past its data")
        try:
            pkey = part_key(shop_id, month, p["name"], shared=p.get("shared") is True)
        except ValueError as err:
            raise CorruptObjectError(key, str(err)) from None
        deleted_at = p.get("deleted_at")
        summary = None
        if "dir" in p:
            summary = _check_settled(p, lengths, key)
            # Its blocks are every record block: ending before the records would leave jobs to no block.
            if at != p["size"] - (filters or 0):
                raise CorruptObjectError(
                    key, f"block directory of part {p['name']}: its blocks end at byte {at}, "
                         f"its records at {p['size'] - (filters or 0)}")
            if not isinstance(deleted_at, str) or not _count(p.get("job_count")) or p["job_count"] == 0:
                raise CorruptObjectError(key, f"settled part {p['name']} needs its delete time and a job count")
            summary["job_count"] = p["job_count"]
            summary["job_filter"] = _check_job_filter(p, key)
        elif "jf" in p or "jk" in p:
            raise CorruptObjectError(key, f"part {p['name']} has a job filter and no block directory")
        model_parts.append({
            "name": p["name"], "key": pkey, "size": p["size"], "etag": p.get("etag"),
            "committed_at": p.get("committed_at"), "shared": p.get("shared") is True, "blocks": ranges,
            "deleted_at": deleted_at,
            "filters": (p["size"] - filters, filters) if filters else None,
            # Set below when no entry points at the part (a settled part: its summary answers).
            "settled": summary,
        })
    model_jobs = {}
    for job_id, entries in jobs.items():
        if not isinstance(entries, list):
            raise CorruptObjectError(key, f"entries of job {job_id} must be a list")
        out = []
        for e in entries:
            if not isinstance(e, dict):
                raise CorruptObjectError(key, f"entry of job {job_id} is not an object")
            ordinal = e.get("part", 0)
            if not _count(ordinal) or ordinal >= len(model_parts):
                raise CorruptObjectError(key, f"entry of job {job_id} points at no committed part")
            part = model_parts[ordinal]

            def block(n, part=part, job_id=job_id):
                if not _count(n) or n >= len(part["blocks"]):
                    raise CorruptObjectError(key, f"entry of job {job_id} names no block of part {part['name']}")
                return part["blocks"][n]

            completed_at = completion_of(month, e.get("completed"))
            if completed_at is None:
                raise CorruptObjectError(
                    key, f"entry of job {job_id} needs completed (milliseconds from the month's start, or text), "
                    f"not {_json_named(e, 'completed')}")
            out.append({
                "part": part["name"],
                "part_key": part["key"],
                "block": block(e.get("block", 0)),
                # Absent: in the job's own block; null: the job has none.
                "platform_data": None if e.get("pd_block", 0) is None else block(e.get("pd_block", e.get("block", 0))),
                "completed_at": completed_at,
                "committed_at": e.get("committed_at", part["committed_at"]),
                "deleted_at": e["deleted_at"] if "deleted_at" in e else part["deleted_at"],
                # The hot objects the archival covered (their keys): a late flush is one not among them.
                "sources": [src.get("key") for src in e.get("sources") or [] if isinstance(src, dict)],
            })
        model_jobs[job_id] = out
    # A part with a block directory and entries in `jobs` is not settled: its entries answer.
    pointed = {e["part"] for entries in model_jobs.values() for e in entries}
    for part in model_parts:
        if part["name"] in pointed:
            part["settled"] = None
    return {"shop_id": shop_id, "month": month, "parts": model_parts, "jobs": model_jobs}


def parse_month_index(data, key):
    """A whole month index (all members)."""
    lines = [line for line in gunzip_all(data, key).split(b"\n") if line]
    if not lines:
        raise CorruptObjectError(key, "index is empty")
    header = loads_exact(lines[0], key)
    if not isinstance(header, dict):
        raise CorruptObjectError(key, "index header is not an object")
    return index_from_members(header, [loads_exact(line, key) for line in lines[1:]], key)


def parse_shared_index(data, key, shop_id):
    """The shop's view of a month's shared index (None when the shop has nothing packed there), with
    the shared parts' segments checked: every entry must lie inside the shop's own segment."""
    value = loads_exact(gunzip_all(data, key), key)
    if not isinstance(value, dict):
        raise CorruptObjectError(key, "shared index is not an object")
    check_format("shared-index", value.get("format"), key)
    month, parts, shops = value.get("month"), value.get("parts"), value.get("shops")
    if not isinstance(month, str) or not isinstance(parts, list) or not isinstance(shops, dict):
        raise CorruptObjectError(key, "shared index needs month, parts and shops")
    stored = shops.get(shop_id)
    if stored is None:
        return None
    if not isinstance(stored, dict):
        raise CorruptObjectError(key, f"the view of {shop_id} is not an object")
    view = index_from_members({**stored, "month": month}, [], key, expect_format=False)
    if view["shop_id"] != shop_id:
        raise CorruptObjectError(key, f"the view under {shop_id} is of {view['shop_id']}")
    by_name = {p.get("name"): p for p in parts if isinstance(p, dict)}
    for p in view["parts"]:
        shared = by_name.get(p["name"])
        seg = (shared or {}).get("segments", {}).get(shop_id)
        if not p["shared"] or shared is None or shared.get("size") != p["size"] or not seg:
            raise CorruptObjectError(key, f"the view of {shop_id} names part {p['name']}, which holds no segment of it")
        p["segment"] = (seg[0], seg[1])
    for job_id, entries in view["jobs"].items():
        for e in entries:
            seg = next(p["segment"] for p in view["parts"] if p["name"] == e["part"])
            for r in (e["block"], e["platform_data"]):
                if r is not None and not (r[0] >= seg[0] and r[0] + r[1] <= seg[0] + seg[1]):
                    raise CorruptObjectError(key, f"entry of job {job_id} lies outside the segment of {shop_id}")
    return view


# --- parts ----------------------------------------------------------------------------------------

def _lines(inflated):
    return [line + b"\n" for line in inflated.split(b"\n")[:-1]] if inflated.endswith(b"\n") else None


def shop_lines(inflated, shop_id):
    """The lines of `shop_id` in one block of a shared part: from its part header line to the next
    header line, or (no header of it in the block) the lines before the block's first header."""
    lines = inflated.split(b"\n")
    lines = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])

    def header_shop(line):
        if b'"type":"part"' not in line:
            return None
        try:
            v = json.loads(line)
        except ValueError:
            return None
        return v.get("shop_id") if isinstance(v, dict) and v.get("type") == "part" else None

    shops = [header_shop(line) for line in lines]
    if shop_id in shops:
        start = shops.index(shop_id)
        end = next((i for i in range(start + 1, len(lines)) if shops[i] is not None), len(lines))
        return b"".join(lines[start:end])
    end = next((i for i, s in enumerate(shops) if s is not None), len(lines))
    return b"".join(lines[:end])


def find_record(inflated, where, want_type, want_id, shop_id):
    """The record of the block whose job_id (job) or ref (platform_data) is `want_id`; a block the
    index pointed at that does not hold it is damage."""
    needle = (f'"job_id":{json.dumps(want_id)}' if want_type == "job" else f'"ref":{json.dumps(want_id)}').encode()
    at = inflated.find(needle)
    while at >= 0:
        start = inflated.rfind(b"\n", 0, at) + 1
        end = inflated.find(b"\n", at)
        if end < 0:
            break
        record = loads_exact(inflated[start:end], f"{where} line {start}")
        if isinstance(record, dict) and record.get("type") == want_type and \
                record.get("job_id" if want_type == "job" else "ref") == want_id:
            if want_type == "job":
                check_job_record(record, f"{where} line {start}", shop_id)
            return record
        at = inflated.find(needle, end)
    raise CorruptObjectError(where, f"block holds no {'job' if want_type == 'job' else 'platform data'} {want_id}")


def record_completion(record):
    """The completion a job record archived: its `job.completed_at`, else its row's (None when neither)."""
    job, row = record.get("job"), record.get("row")
    completed = job.get("completed_at") if isinstance(job, dict) else None
    if completed is None and isinstance(row, dict):
        completed = row.get("completed_at")
    return completed if isinstance(completed, str) else None


def record_status(record):
    """The status a job record archived: its `job.status`, else its row's `job_status` ("" when neither)."""
    job = record.get("job")
    if isinstance(job, dict) and isinstance(job.get("status"), str):
        return job["status"]
    row = record.get("row")
    status = row.get("job_status") if isinstance(row, dict) else None
    return status if isinstance(status, str) else ""


def check_job_record(record, where, shop_id):
    if record.get("shop_id", shop_id) != shop_id:
        raise CorruptObjectError(where, f"record is of shop {record.get('shop_id')}, not {shop_id}")
    details = record.get("details")
    if not isinstance(details, dict) or not all(f in details for f in COUNT_ORDER):
        raise CorruptObjectError(where, "job record needs details with chunk_ids, failed, skipped, conflict")
    record["details"] = expand_details(details, where)


_NUMBERED = re.compile(r"^(.*?)([1-9][0-9]{0,14})$")


def _expand_list(stored, where):
    first = stored[0] if stored else None
    m = _NUMBERED.match(first) if isinstance(first, str) and not first.startswith("~") else None
    out = []
    for i, s in enumerate(stored):
        if isinstance(s, str):
            out.append(s[1:] if s.startswith("~") else s)
        elif isinstance(s, bool) or not isinstance(s, int):
            out.append(s)
        else:
            if i == 0 or m is None:
                raise CorruptObjectError(where, f"document list entry {s} is not an id")
            n = int(m.group(2)) + int(s)
            if n < 1 or n > 999_999_999_999_999:
                raise CorruptObjectError(where, f"document list entry {s} is out of range")
            out.append(m.group(1) + str(n))
    return out


def expand_details(details, where):
    """A job record's stored details with its failed / skipped document lists restored: a number is
    the list's first id with that number added to its own, a string beginning with `~` that string
    less its `~` (docs/archive-format.md, "Document lists")."""
    out = dict(details)
    for kind in ("failed", "skipped"):
        m = out.get(kind)
        if isinstance(m, dict):
            out[kind] = {r: _expand_list(l, where) if isinstance(l, list) else l for r, l in m.items()}
    return out


def read_block(part_bytes, where, shared_shop=None):
    """One block (gzip member) of a part, inflated; of a shared part, only `shared_shop`'s lines."""
    if len(part_bytes) < 18 or part_bytes[0] != 0x1F or part_bytes[1] != 0x8B:
        raise CorruptObjectError(where, "not a gzip member")
    inflated = gunzip_all(part_bytes, where)
    return shop_lines(inflated, shared_shop) if shared_shop is not None else inflated


_IDENTITY = {
    "pk": lambda shop, job: f"SHOP#{shop}",
    "sk": lambda shop, job: f"JOB#{job}",
    "job_id": lambda shop, job: job,
}


def expand_row(record, shop_id):
    """The archived row, exactly as it was (`row_omitted` attributes restored); None when the row had
    expired before archival."""
    row = record.get("row")
    if row is None:
        return None
    out = dict(row)
    for name in record.get("row_omitted", []):
        rule = _IDENTITY.get(name)
        out[name] = rule(shop_id, record["job_id"]) if rule else row.get("completed_at")
    ttl_after = record.get("row_ttl_after")
    if ttl_after is not None:
        at = _utc_seconds(row.get("completed_at"))
        if at is None or not isinstance(ttl_after, int) or isinstance(ttl_after, bool):
            raise CorruptObjectError(record.get("job_id", "?"), "row_ttl_after needs whole seconds and a UTC completed_at")
        out["ttl"] = at + ttl_after
    return {k: out[k] for k in sorted(out, key=_utf16)}


_UTC_SECONDS = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|\+00:00)$")


def _utc_seconds(value):
    """Whole Unix seconds of a UTC `completed_at` (`…Z` or `…+00:00`, the fraction ignored), as the
    writer counts `row_ttl_after` from it; None for any other text."""
    m = _UTC_SECONDS.match(value) if isinstance(value, str) else None
    if m is None:
        return None
    try:
        return calendar.timegm(datetime(*(int(g) for g in m.groups())).timetuple())
    except ValueError:
        return None


# --- details --------------------------------------------------------------------------------------

def is_empty_details(d):
    return not d["chunk_ids"] and all(not lst for kind in COUNT_ORDER[1:] for lst in d[kind].values())


def merge_details(payloads):
    """Union of payloads in order: chunk ids sorted and unique, every reason's list deduplicated in
    first-occurrence order, reasons sorted, redactions once each (oldest first, absent when none)."""
    chunk_ids = set()
    kinds = {"failed": {}, "skipped": {}, "conflict": {}}
    seen = {"failed": {}, "skipped": {}, "conflict": {}}
    redacted = {}
    for p in payloads:
        chunk_ids.update(p["chunk_ids"])
        for r in p.get("redacted") or []:
            redacted[f"{r['at']} {r['listings']}"] = r
        for kind in ("failed", "skipped", "conflict"):
            for reason, items in p[kind].items():
                lst = kinds[kind].setdefault(reason, [])
                ids = seen[kind].setdefault(reason, set())
                for item in items:
                    ident = canonical_json(item) if kind == "conflict" else item
                    if ident not in ids:
                        ids.add(ident)
                        lst.append(item)
    out = {"chunk_ids": sorted(chunk_ids, key=lambda s: s.encode("utf-8"))}
    for kind in ("failed", "skipped", "conflict"):
        out[kind] = {r: kinds[kind][r] for r in sorted(kinds[kind], key=_utf16)}
    if redacted:
        out["redacted"] = sorted(redacted.values(), key=lambda r: (r["at"], int(r["listings"])))
    return out


# --- document filters -----------------------------------------------------------------------------

def parse_filters_member(data, key, shop_id, shared):
    """The filters member of a part → [(offset, length, kind, bytes, k, docs)] of `shop_id`'s blocks."""
    line = loads_exact(gunzip_all(data, key), key)
    if not isinstance(line, dict) or line.get("type") != "doc_filters":
        raise CorruptObjectError(key, "the trailing member is not a doc_filters line")
    k = line.get("k")
    blocks = (line.get("shops") or {}).get(shop_id, []) if shared else line.get("blocks")
    if not _count(k) or k == 0 or k > 16 or not isinstance(blocks, list):
        raise CorruptObjectError(key, "document filters are malformed")
    import base64

    out = []
    for b in blocks:
        if not isinstance(b, list) or len(b) != 5 or b[3] not in ("f", "g") or not _count(b[2]):
            raise CorruptObjectError(key, "document filters are malformed")
        data = base64.b64decode(b[4]) if isinstance(b[4], str) else b""
        # Never an entry without ids or bytes, nor a set shorter than n·(k + 1) bits: damage, not "no match".
        if b[2] == 0 or not data or (b[3] == "g" and b[2] * (k + 1) > len(data) * 8):
            raise CorruptObjectError(key, "document filters are malformed")
        out.append((b[0], b[1], b[3], data, k, b[2]))
    return out


_SUFFIX = re.compile(r"^(.*?)([1-9][0-9]{0,14})$", re.S)


def _varint(buf, at):
    value, scale = 0, 1
    while True:
        if at >= len(buf):
            raise CorruptObjectError("document fence", "truncated")
        byte = buf[at]
        at += 1
        value += (byte & 127) * scale
        if byte < 128:
            return value, at
        scale *= 128


def _as_utf8_reads(doc):
    """`doc` as its UTF-8 reads back: a lone surrogate (JSON may carry one: "\\ud800") becomes U+FFFD,
    as the TypeScript writer's UTF-8 of filter ids has it (docs/archive-format.md, "Document filters")."""
    return doc.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def fence_contains(data, doc):
    doc = _as_utf8_reads(doc)
    buf = zlib.decompress(data, -15)
    m = _SUFFIX.match(doc)
    want = int(m.group(2)) if m else -1
    at = 0
    while at < len(buf):
        tag = buf[at]
        at += 1
        if tag not in (0, 1):
            raise CorruptObjectError("document fence", f"unknown entry tag {tag}")
        n, at = _varint(buf, at)
        if at + n > len(buf):
            raise CorruptObjectError("document fence", "truncated")
        text = buf[at:at + n].decode("utf-8", "replace")
        at += n
        if tag == 1:
            if text == doc:
                return True
            continue
        count, at = _varint(buf, at)
        value = 0
        for _ in range(count):
            gap, at = _varint(buf, at)
            value += gap
            if value == want and m and text == m.group(1):
                return True
    return False


def golomb_may_contain(data, docs, doc, k):
    """Whether `doc` may be one of the `docs` ids of a Golomb-coded set (Rice parameter k)."""
    if not data or not docs:
        return False
    import hashlib

    h1 = int.from_bytes(hashlib.sha256(_as_utf8_reads(doc).encode("utf-8")).digest()[0:4], "big")
    want = (h1 * docs * (1 << k)) >> 32
    bits, at, value = len(data) * 8, 0, 0

    def bit():
        nonlocal at
        if at >= bits:
            raise CorruptObjectError("document filter", "Golomb-coded set truncated")
        b = (data[at >> 3] >> (7 - (at & 7))) & 1
        at += 1
        return b

    for _ in range(docs):
        q = 0
        while bit():
            q += 1
        r = 0
        for _ in range(k):
            r = r * 2 + bit()
        value += (q << k) + r
        if value >= want:
            return value == want
    return False


def may_contain(kind, data, doc, k, docs):
    return bool(data) and (fence_contains(data, doc) if kind == "f" else golomb_may_contain(data, docs, doc, k))


def block_may_contain(key, offset, length, kind, data, doc, k, docs):
    """may_contain for a block of part `key`: a filter that cannot be decoded is a CorruptObjectError
    naming the part and the block's bytes, never "no match"."""
    try:
        return may_contain(kind, data, doc, k, docs)
    except (CorruptObjectError, zlib.error, UnicodeDecodeError) as err:
        why = err.reason if isinstance(err, CorruptObjectError) else str(err)
        raise CorruptObjectError(
            key, f"document filter of the block at bytes {offset}-{offset + length - 1}: {why}") from err


def document_listings(details, doc):
    """[{kind, reason}] of `doc` in a job's details: failed / skipped ids, conflict items' doc_id."""
    out = []
    for kind in ("failed", "skipped", "conflict"):
        for reason, items in details.get(kind, {}).items():
            for item in items:
                if (item.get("doc_id") if kind == "conflict" else item) == doc:
                    out.append({"kind": kind, "reason": reason})
    return out


# --- settled parts (a part's `dir` and `last`: its entries are its records') ---------------------------


def _check_settled(p, lengths, key):
    """A stored part's block directory checked against its blocks: {dir, last, dir_pd, lengths}. One
    id (or None: a block holding no job record) per block, ascending, at least one id, `last` at or
    above them, `dir_pd` pairs of its blocks; a shared part has none. Damage names the index and part."""
    name = p.get("name")

    def bad(what):
        raise CorruptObjectError(key, f"block directory of part {name}: {what}")

    if p.get("shared") is True:
        bad("a shared part has none")
    ids, last = p["dir"], p.get("last")
    if not isinstance(ids, list) or len(ids) != len(lengths) or not isinstance(last, str):
        bad("needs one id per block and the last id")
    top = None
    for d in ids:
        # None: a block holding no job record. Code-point order: job ids are ASCII, so str
        # comparison is the writer's order.
        if d is None:
            continue
        if not isinstance(d, str) or (top is not None and not d > top):
            bad("ids must ascend")
        top = d
    if top is None or not last >= top:
        bad("the last id sorts below the last block")
    pds = p.get("dir_pd", [])
    if not isinstance(pds, list) or not all(
            isinstance(x, list) and len(x) == 2 and all(_count(n) and n < len(lengths) for n in x) for x in pds):
        bad("dir_pd must be [block, platform data block] pairs of its blocks")
    return {"dir": ids, "last": last, "dir_pd": pds, "lengths": lengths}


JOB_FILTER_K = 7
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


def golomb_values(data, n, k):
    """The `n` values of a Golomb-coded set, ascending; None when the bytes do not hold exactly that
    (cut short, or more than the last value's byte with zero padding)."""
    bits = "".join(format(b, "08b") for b in data)
    at, value, out = 0, 0, []
    for _ in range(n):
        stop = bits.find("0", at)  # the unary quotient: 1s up to a 0
        if stop < 0 or stop + 1 + k > len(bits):
            return None
        value += ((stop - at) << k) + (int(bits[stop + 1:stop + 1 + k], 2) if k else 0)
        out.append(value)
        at = stop + 1 + k
    if (at + 7) // 8 != len(data) or "1" in bits[at:]:
        return None
    return out


def _check_job_filter(p, key):
    """A settled part's job filter (`jf` base64, `jk` its Rice parameter, 7 when absent) as (k, bytes),
    checked to hold exactly `job_count` values; None when the part has none."""
    if "jf" not in p and "jk" not in p:
        return None

    def bad(what):
        raise CorruptObjectError(key, f"job filter of part {p['name']}: {what}")

    k = p.get("jk", JOB_FILTER_K)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 16:
        bad("jk must be a whole number 1-16")
    jf = p.get("jf")
    if not isinstance(jf, str) or not jf or not _BASE64.match(jf):
        bad("jf must be base64")
    import base64

    data = base64.b64decode(jf)
    values = golomb_values(data, p["job_count"], k)
    if values is None:
        bad(f"it does not hold the part's {p['job_count']} jobs")
    return (k, data, values)


def _job_filter_holds(job_filter, n, job_id):
    """Whether a settled part's job filter (k, bytes, its values decoded) may hold `job_id`: the id's
    hash, as the document filters' `g` sets hash, among the values."""
    import bisect
    import hashlib

    k, _, values = job_filter
    h1 = int.from_bytes(hashlib.sha256(_as_utf8_reads(job_id).encode("utf-8")).digest()[0:4], "big")
    want = (h1 * n * (1 << k)) >> 32
    at = bisect.bisect_left(values, want)
    return at < len(values) and values[at] == want


def settled_candidates(index, job_id):
    """The blocks of the month's settled parts that may hold `job_id` (one per settled part whose id
    range covers it and whose job filter, when it has one, matches it; in the parts' order): [{part, block, range, from, below, last, pd_range}].
    A part whose filter matches an id outside its stated range gives its nearest edge block (the first
    below the range, the last above it): a damaged `last` or first `dir` id must not hide the jobs past
    it; reading the block finds a record outside its range (settled_entry: damage) or a filter false
    match. A part without a filter trusts its range. Parts with entries are not looked at: their
    entries answer."""
    out = []
    for part in index["parts"]:
        s = part.get("settled")
        if not s:
            continue
        # Its job filter (when it has one) says the job is not in the part: no block to read.
        if s["job_filter"] is not None and not _job_filter_holds(s["job_filter"], s["job_count"], job_id):
            continue
        ids, lengths = s["dir"], s["lengths"]
        first = next(d for d in ids if d is not None)
        if s["job_filter"] is None and (job_id < first or job_id > s["last"]):
            continue
        # Below the range (with a filter): the first block; above it, the loop's last block.
        block = max((i for i, d in enumerate(ids) if d is not None and d <= job_id),
                    default=ids.index(first))
        pd_block = next((x[1] for x in s["dir_pd"] if x[0] == block), None)
        out.append({"part": part, "block": block, "range": (sum(lengths[:block]), lengths[block]),
                    "from": ids[block], "below": next((d for d in ids[block + 1:] if d is not None), None),
                    "last": s["last"],
                    "pd_range": None if pd_block is None else (sum(lengths[:pd_block]), lengths[pd_block])})
    return out


def settled_entry(c, inflated, job_id, key):
    """The job's entry in a settled part from its candidate block (inflated), as the index would have
    stored it: the record's completion, the part's commit and delete, its platform data in the block
    (or the one `dir_pd` names) when the record names any. None when the block does not hold the job
    (not archived in this part). A job record outside the block's id range is the directory's damage."""
    part = c["part"]
    found = None
    for line in inflated.split(b"\n"):
        if not line:
            continue
        record = loads_exact(line, f"{key} block {c['block']}")
        if not isinstance(record, dict) or record.get("type") != "job":
            continue
        rid = record.get("job_id")
        if not isinstance(rid, str) or rid < c["from"] or rid > c["last"] or \
                (c["below"] is not None and rid >= c["below"]):
            raise CorruptObjectError(
                key, f"block directory of part {part['name']}: block {c['block']} holds job {rid}, outside its range")
        if rid != job_id:
            continue
        completed = record_completion(record)
        if completed is None:
            raise CorruptObjectError(key, f"part {part['name']}: the record of job {rid} names no completion")
        found = {
            "part": part["name"], "part_key": part["key"], "block": c["range"],
            "platform_data": (c["pd_range"] or c["range"]) if record.get("platform_data_ref") else None,
            "completed_at": completed, "committed_at": part["committed_at"], "deleted_at": part["deleted_at"],
            "sources": [],
        }
    return found
