"""The Python reader against the conformance vectors (docs/vectors/), with no S3: a bucket served from
the snapshot's files. Also the errors a user must see instead of a silent "none": a part in a Glacier
class, a lost month index, a damaged index, a pre-1.0 index.

    PYTHONPATH=shared/python python3 -m unittest test/python/test_reader.py
"""
import copy
import gzip
import hashlib
import io
import json
import os
import sys
import unittest

from botocore.exceptions import ClientError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "shared", "python"))

from job_details_archive import (  # noqa: E402
    ArchiveExpiredError,
    ArchiveReader,
    ConcurrentModificationError,
    CorruptObjectError,
    InvalidInputError,
    MissingIndexError,
    NeedsRestoreError,
    PartMissingError,
    UnsupportedFormatError,
    canonical_json,
)
from job_details_archive.format import INDEX_FIRST_READ_BYTES, loads_exact  # noqa: E402

VECTORS = os.path.join(ROOT, "docs", "vectors")


def _unquote(etag):
    return etag.strip().removeprefix("W/").strip('"')


def _error(code, status, message="", **extra):
    return ClientError({"Error": {"Code": code, "Message": message, **extra},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "GetObject")


class SnapshotS3:
    """The few S3 calls the reader makes, over a dict of key → (bytes, metadata).

    GetObject as S3 documents it for conditional reads: every response carries the object's ETag
    (quoted; here the MD5 of its bytes, as S3's for a single-part upload); `IfMatch` naming another
    ETag fails with 412 PreconditionFailed (Condition If-Match), on a key with no object with 404
    NoSuchKey (existence is checked first, as infra/local/s3rver-entry.cjs emulates it for PUTs).
    `after_get(key, Range)`, when set, runs after each GET served: a test changes the bucket there to
    put a concurrent rewrite or delete between two reads of one object — a race no emulator can be
    made to hit between two given requests, so it is emulated here (GUIDE: mocks only for a 412 race)."""

    def __init__(self, objects):
        self.objects = objects
        self.glacier = set()
        self.calls = 0
        self.after_get = None
        # Every GetObject asked: (key, Range, IfMatch).
        self.gets = []

    @classmethod
    def from_vectors(cls):
        with open(os.path.join(VECTORS, "expected.json"), "rb") as f:
            expected = loads_exact(f.read(), "expected.json")
        objects = {}
        for o in expected["objects"]:
            with open(os.path.join(VECTORS, "bucket", o["key"]), "rb") as f:
                objects[o["key"]] = (f.read(), o.get("metadata", {}))
        return cls(objects), expected

    @staticmethod
    def etag(data):
        return '"' + hashlib.md5(data).hexdigest() + '"'

    def get_object(self, Bucket, Key, Range=None, IfMatch=None):
        self.calls += 1
        self.gets.append((Key, Range, IfMatch))
        if Key not in self.objects:
            raise _error("NoSuchKey", 404)
        data, meta = self.objects[Key]
        etag = self.etag(data)
        if IfMatch is not None and IfMatch.strip() != "*" and _unquote(IfMatch) != _unquote(etag):
            raise _error("PreconditionFailed", 412, "At least one of the pre-conditions you specified did not hold",
                         Condition="If-Match")
        if Key in self.glacier:
            raise _error("InvalidObjectState", 403, StorageClass="DEEP_ARCHIVE")
        out = {"Metadata": dict(meta), "ETag": etag}
        if Range:
            start, end = (int(x) for x in Range[len("bytes="):].split("-"))
            if start >= len(data):
                raise _error("InvalidRange", 416)
            body = data[start:end + 1]
            out["ContentRange"] = f"bytes {start}-{start + len(body) - 1}/{len(data)}"
        else:
            body = data
        out["Body"] = io.BytesIO(body)
        if self.after_get is not None:
            self.after_get(Key, Range)
        return out

    def list_objects_v2(self, Bucket, Prefix, ContinuationToken=None):
        self.calls += 1
        keys = sorted((k for k in self.objects if k.startswith(Prefix)), key=lambda k: k.encode())
        return {"Contents": [{"Key": k} for k in keys], "IsTruncated": False}


def comparable(lookup):
    return canonical_json({k: v for k, v in lookup.items() if k not in ("provenance", "case")})


class Vectors(unittest.TestCase):
    def test_every_lookup_of_the_vectors(self):
        s3, expected = SnapshotS3.from_vectors()
        reader = ArchiveReader("vectors", s3=s3)
        self.assertGreaterEqual(len(expected["lookups"]), 6)
        for want in expected["lookups"]:
            with self.subTest(case=want["case"]):
                got = reader.lookup(want["shop_id"], want["job_id"])
                self.assertEqual(comparable(got), comparable(want))
                self.assertEqual(got["provenance"]["warnings"], [])

    def test_with_the_completion_known_one_month_is_read(self):
        s3, expected = SnapshotS3.from_vectors()
        reader = ArchiveReader("vectors", s3=s3)
        for want in expected["lookups"]:
            newest = want["archivals"][-1]["completed_at"]
            got = reader.lookup(want["shop_id"], want["job_id"], completed_at=newest)
            same_month = [a for a in want["archivals"] if a["month"] == newest[:7]]
            self.assertEqual(len(got["archivals"]), len(same_month), want["case"])

    def test_no_details_reads_as_null_and_exact_numbers_stay_exact(self):
        s3, expected = SnapshotS3.from_vectors()
        empty = next(w for w in expected["lookups"] if "no details" in w["case"])
        got = ArchiveReader("vectors", s3=s3).lookup(empty["shop_id"], empty["job_id"])
        self.assertEqual((got["details"], got["details_source"]), (None, "archive"))
        retried = next(w for w in expected["lookups"] if "64-bit" in w["case"])
        got = ArchiveReader("vectors", s3=s3).lookup(retried["shop_id"], retried["job_id"])
        self.assertEqual(got["platform_data"]["indexer"]["big"], 9223372036854775807)
        self.assertIn('"big":9223372036854775807', canonical_json(got))


class Completion(unittest.TestCase):
    """An entry's `completed`: milliseconds from the start of the index's month, or text (the spec)."""

    def test_milliseconds_from_the_month_start_or_text(self):
        from job_details_archive.format import completion_of, loads_exact
        self.assertEqual(completion_of("2026-01", 0), "2026-01-01T00:00:00.000Z")
        self.assertEqual(completion_of("2026-01", 31 * 86_400_000 - 1), "2026-01-31T23:59:59.999Z")
        self.assertEqual(completion_of("2026-01", -3_600_000), "2025-12-31T23:00:00.000Z")
        self.assertEqual(completion_of("2026-11", loads_exact(b"2387575000", "k")), "2026-11-28T15:12:55.000Z")
        self.assertEqual(completion_of("2026-01", "2026-01-10T00:00:00Z"), "2026-01-10T00:00:00Z")
        for bad in (None, 1.5, True, [0], 10 ** 20, -10 ** 15, 10 ** 15):
            self.assertIsNone(completion_of("2026-01", bad), bad)
        self.assertIsNone(completion_of("2026", 0))

    def test_a_whole_number_written_with_a_fraction_or_exponent_is_that_number(self):
        # JSON `1.0` and `1e3` are whole numbers: the TypeScript reader (JSON.parse) reads them as 1 and
        # 1000, so this reader does too (test/unit/archive-format-month-index.test.ts has the same cases).
        from job_details_archive.format import completion_of, loads_exact
        for text, want in ((b"1.0", "2026-01-01T00:00:00.001Z"), (b"1e3", "2026-01-01T00:00:01.000Z"),
                           (b"-0.0", "2026-01-01T00:00:00.000Z"), (b"86400000.000", "2026-01-02T00:00:00.000Z")):
            self.assertEqual(completion_of("2026-01", loads_exact(text, "k")), want, text)
        for text in (b"1.5", b"1e-3", b"1e400", b"-1e400"):
            self.assertIsNone(completion_of("2026-01", loads_exact(text, "k")), text)


class Months(unittest.TestCase):
    """`yyyy-mm` needs the month 01-12 (as TypeScript's validateMonth): never rolled over into the next year."""

    def test_month_13_or_00_is_refused_naming_it(self):
        from job_details_archive.format import check_month, completion_of, month_of, part_key
        for bad in ("2026-13", "2026-00", "2026-1", "26-01", None):
            with self.assertRaises(ValueError) as ctx:
                check_month(bad)
            self.assertIn(json.dumps(bad), str(ctx.exception))
            self.assertIsNone(completion_of(bad, 0), bad)
        with self.assertRaises(ValueError) as ctx:
            part_key("s", "2026-13", "part-20260101T000000Z-aaaaaaaa.jsonl.gz")
        self.assertIn('"2026-13"', str(ctx.exception))
        with self.assertRaises(ValueError) as ctx:
            month_of("2026-13-01T00:00:00Z")
        self.assertIn('"2026-13-01T00:00:00Z"', str(ctx.exception))
        self.assertEqual([check_month("2026-01"), check_month("2026-12")], ["2026-01", "2026-12"])

    def test_an_index_of_month_13_is_damage_naming_the_month(self):
        from job_details_archive.format import index_from_members
        header = {"format": "job-details-archive/index@1.0", "shop_id": "s", "month": "2026-13",
                  "parts": [{"name": "part-20260101T000000Z-aaaaaaaa.jsonl.gz", "size": 100}],
                  "jobs": {"j1": [{"completed": 0}]}}
        with self.assertRaises(CorruptObjectError) as ctx:
            index_from_members(header, [], "job-details-index/s/2026-13/index.json", expect_format=False)
        self.assertIn('"2026-13"', str(ctx.exception))


class Inputs(unittest.TestCase):
    """Bad arguments are an InvalidInputError naming the argument, before any request (as the
    TypeScript reader's InvalidInputError/InvalidIdError): never a ValueError after the hot listing."""

    def test_a_bad_completed_at_is_refused_before_any_request(self):
        from datetime import datetime
        s3, expected = SnapshotS3.from_vectors()
        want = expected["lookups"][0]
        reader = ArchiveReader("vectors", s3=s3)
        for bad in ("2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-03-14T09:12:00",
                    "2026-03-14", "yesterday", 1773479520, datetime(2026, 3, 14, 9, 12)):
            with self.subTest(bad=bad):
                with self.assertRaises(InvalidInputError) as ctx:
                    reader.lookup(want["shop_id"], want["job_id"], completed_at=bad)
                self.assertEqual(ctx.exception.field, "completed_at")
                self.assertIsInstance(ctx.exception, ValueError)
                self.assertEqual(s3.calls, 0)

    def test_bad_ids_are_refused_before_any_request(self):
        s3, expected = SnapshotS3.from_vectors()
        want = expected["lookups"][0]
        reader = ArchiveReader("vectors", s3=s3)
        for shop, job in (("../x", want["job_id"]), (want["shop_id"], "a/b"), (want["shop_id"], None)):
            with self.assertRaises(InvalidInputError):
                reader.lookup(shop, job)
        with self.assertRaises(InvalidInputError):
            reader.search(want["shop_id"], "")
        self.assertEqual(s3.calls, 0)

    def test_the_timestamp_forms_the_typescript_reader_takes_name_their_utc_month(self):
        from datetime import datetime, timedelta, timezone
        from job_details_archive.format import month_of
        for text, month in (("2026-03-14T09:12:00+00:00", "2026-03"), ("2026-03-31T23:30:00-01:00", "2026-04"),
                            ("2026-04-01 00:30+0100", "2026-03"), ("2026-03-14T09:12:00.123456789Z", "2026-03"),
                            ("2026-03-14T09:12z", "2026-03"),
                            (datetime(2026, 1, 31, 23, tzinfo=timezone(timedelta(hours=-2))), "2026-02")):
            self.assertEqual(month_of(text), month, text)
        for bad in ("0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-02:00", "2026-03-14T24:00:00Z",
                    "2026-03-14T09:12:00+24:00", "\u0662\u0660\u0662\u0666-03-14T09:12:00Z"):
            with self.assertRaises(InvalidInputError, msg=bad):
                month_of(bad)


class Search(unittest.TestCase):
    def test_every_search_of_the_vectors(self):
        s3, expected = SnapshotS3.from_vectors()
        reader = ArchiveReader("vectors", s3=s3)
        for want in expected["searches"]:
            with self.subTest(doc=want["doc_id"]):
                got = reader.search(want["shop_id"], want["doc_id"])
                self.assertEqual(canonical_json(got["jobs"]), canonical_json(want["jobs"]))
                self.assertEqual((got["provenance"]["warnings"], got["provenance"]["parts_not_searched"]), ([], []))

    def _search(self, s3, doc):
        _, expected = SnapshotS3.from_vectors()
        want = next(w for w in expected["searches"] if w["doc_id"] == doc)
        return want, ArchiveReader("vectors", s3=s3).search(want["shop_id"], doc)

    def test_a_part_that_cannot_be_read_is_named_and_the_other_parts_answer(self):
        # The retried job's document is in two parts: one missing, damaged (zeroed) or cut short is
        # named in a warning, the other's job found; one in a Glacier class is named among
        # parts_not_searched, nothing restored (as the TypeScript findDocument does).
        for how in ("missing", "zeroed", "cut", "glacier"):
            with self.subTest(how=how):
                s3, _ = SnapshotS3.from_vectors()
                key = next(k for k in s3.objects if k.endswith("part-20261129T052828Z-jh6znagv.jsonl.gz"))
                data, meta = s3.objects[key]
                if how == "missing":
                    del s3.objects[key]
                elif how == "glacier":
                    s3.glacier.add(key)
                else:
                    s3.objects[key] = (data[:8] if how == "cut" else bytes(len(data)), meta)
                want, got = self._search(s3, "rocbqeko6wjam-r")
                self.assertEqual(canonical_json(got["jobs"]),
                                 canonical_json([j for j in want["jobs"] if j["part_key"] != key]))
                prov = got["provenance"]
                self.assertEqual(prov["parts_not_searched"], [key] if how == "glacier" else [])
                self.assertEqual(len(prov["warnings"]), 0 if how == "glacier" else 1)
                self.assertIn(key, "".join(prov["warnings"]) + "".join(prov["parts_not_searched"]))

    def test_search_reads_every_month_not_only_the_newest_a_lookup_searches(self):
        # search_months bounds a lookup's month search only; a search reads every month of the shop
        # (as the TypeScript findDocument does): the older month's job is not silently left out.
        s3, expected = SnapshotS3.from_vectors()
        want = next(w for w in expected["searches"] if w["doc_id"] == "vec-b.myshopify.com-1-doc-1b")
        self.assertEqual(len({j["month"] for j in want["jobs"]}), 2)
        got = ArchiveReader("vectors", s3=s3, search_months=1).search(want["shop_id"], want["doc_id"])
        self.assertEqual(canonical_json(got["jobs"]), canonical_json(want["jobs"]))

    def test_a_lost_shared_index_is_named_and_the_other_months_answer(self):
        s3, _ = SnapshotS3.from_vectors()
        key = "job-details-index/_shared/2026-09/shared.json"
        del s3.objects[key]
        want, got = self._search(s3, "vec-b.myshopify.com-1-doc-1b")
        self.assertEqual(canonical_json(got["jobs"]),
                         canonical_json([j for j in want["jobs"] if j["month"] != "2026-09"]))
        self.assertIn(key, "\n".join(got["provenance"]["warnings"]))

    def test_a_damaged_month_index_is_named_not_searched(self):
        s3, _ = SnapshotS3.from_vectors()
        key = "job-details-index/vec-own.myshopify.com/2026-09/index.json"
        data, meta = s3.objects[key]
        s3.objects[key] = (data[: len(data) // 2], meta)
        _, got = self._search(s3, "rocbqeko6wjam-r")
        self.assertEqual(got["jobs"], [])
        self.assertIn(key, "\n".join(got["provenance"]["warnings"]))

    def test_the_cli_search_says_on_stderr_what_it_could_not_search(self):
        # `python -m job_details_archive search` as `jobarchive search`: what could not be searched (a
        # missing part's warning, a Glacier part not searched) is on stderr whatever stdout holds, so a
        # caller reading the jobs alone (`| jq .jobs`) is still told the answer is incomplete.
        from contextlib import redirect_stderr, redirect_stdout
        from unittest import mock
        from job_details_archive import __main__ as cli
        for how in ("missing", "glacier"):
            with self.subTest(how=how):
                s3, _ = SnapshotS3.from_vectors()
                key = next(k for k in s3.objects if k.endswith("part-20261129T052828Z-jh6znagv.jsonl.gz"))
                if how == "missing":
                    del s3.objects[key]
                else:
                    s3.glacier.add(key)
                want, _ = self._search(SnapshotS3.from_vectors()[0], "rocbqeko6wjam-r")
                out, err = io.StringIO(), io.StringIO()
                with mock.patch("job_details_archive.reader.s3_client", lambda: s3), \
                        redirect_stdout(out), redirect_stderr(err):
                    code = cli.main(["search", "--bucket", "vectors", "--shop", want["shop_id"],
                                     "--doc", "rocbqeko6wjam-r"])
                self.assertEqual(code, 0)
                self.assertEqual(len(json.loads(out.getvalue())["jobs"]), len(want["jobs"]) - 1)
                self.assertIn(key, err.getvalue())

    def test_a_bad_retention_in_the_environment_is_a_usage_error_naming_it(self):
        from contextlib import redirect_stderr
        from unittest import mock
        from job_details_archive import __main__ as cli
        for bad in ("x", "-1", "1.5"):
            with self.subTest(bad=bad):
                err = io.StringIO()
                with mock.patch.dict(os.environ, {"JDA_RETENTION_MONTHS": bad}), redirect_stderr(err), \
                        self.assertRaises(SystemExit) as ctx:
                    cli.main(["lookup", "--bucket", "vectors", "--shop", "s", "--job", "j"])
                self.assertEqual(ctx.exception.code, 2)
                self.assertIn("JDA_RETENTION_MONTHS", err.getvalue())
                self.assertIn(repr(bad), err.getvalue())

    def test_every_golomb_coded_set_of_the_vectors_holds_its_blocks_documents(self):
        # The TypeScript writer's sets read here: each block's listed ids all match (none is missed).
        import base64
        import glob

        from job_details_archive import format as fmt
        from job_details_archive.errors import CorruptObjectError

        checked = 0
        for path in glob.glob(os.path.join(ROOT, "docs/vectors/bucket/job-details-cold/**/*.gz"), recursive=True):
            data = open(path, "rb").read()
            line = json.loads(gzip.decompress(data).split(b"\n")[-2])
            shops = line.get("shops") or {None: line["blocks"]}
            for shop, blocks in shops.items():
                for offset, length, docs, kind, encoded in blocks:
                    text = gzip.decompress(data[offset:offset + length]).decode()
                    ids = set()
                    owner = None
                    for rec in (json.loads(x) for x in text.split("\n") if x):
                        owner = rec["shop_id"] if rec["type"] == "part" else owner
                        if rec["type"] == "job" and shop in (None, owner):
                            d = fmt.expand_details(rec["details"], path)
                            ids |= {i for k in ("failed", "skipped") for lst in d[k].values() for i in lst}
                            ids |= {c["doc_id"] for lst in d["conflict"].values() for c in lst}
                    self.assertEqual(len(ids), docs)
                    if kind != "g":
                        continue
                    bits = base64.b64decode(encoded)
                    for doc in ids:
                        self.assertTrue(fmt.may_contain("g", bits, doc, line["k"], docs), doc)
                        checked += 1
                    if len(bits) > 1:
                        with self.assertRaises(CorruptObjectError):
                            for doc in [*ids, *(f"absent-{i}" for i in range(200))]:
                                fmt.golomb_may_contain(bits[:1], docs, doc, line["k"])
        self.assertGreater(checked, 0)


class Errors(unittest.TestCase):
    def setUp(self):
        self.s3, expected = SnapshotS3.from_vectors()
        self.own = next(w for w in expected["lookups"] if w["case"].startswith("own part,"))
        self.reader = ArchiveReader("vectors", s3=self.s3)
        self.index_key = f"job-details-index/{self.own['shop_id']}/{self.own['archivals'][0]['month']}/index.json"

    def lookup(self, **kw):
        return self.reader.lookup(self.own["shop_id"], self.own["job_id"], **kw)

    def test_a_part_in_a_glacier_class_needs_a_restore(self):
        self.s3.glacier.add(self.own["archivals"][0]["part_key"])
        with self.assertRaises(NeedsRestoreError) as ctx:
            self.lookup()
        self.assertIn("DEEP_ARCHIVE", str(ctx.exception))
        self.assertIn(self.own["archivals"][0]["part_key"], str(ctx.exception))

    def test_a_lost_month_index_is_an_error_not_none(self):
        del self.s3.objects[self.index_key]
        with self.assertRaises(MissingIndexError) as ctx:
            self.lookup(completed_at=self.own["archivals"][0]["completed_at"])
        self.assertIn("jobarchive reindex", str(ctx.exception))

    def test_a_lost_month_index_is_an_error_with_the_month_unknown_too(self):
        del self.s3.objects[self.index_key]
        with self.assertRaises(MissingIndexError) as ctx:
            self.lookup()
        self.assertIn(self.index_key, str(ctx.exception))

    def test_search_names_a_lost_month_index(self):
        # A warning naming the index and its repair, as the TypeScript findDocument names it; what the
        # other months give is still returned.
        del self.s3.objects[self.index_key]
        got = self.reader.search(self.own["shop_id"], "gid://shopify/Product/1")
        self.assertEqual(got["jobs"], [])
        warnings = "\n".join(got["provenance"]["warnings"])
        self.assertIn(self.index_key, warnings)
        self.assertIn("jobarchive reindex", warnings)

    def test_a_part_whose_first_archival_is_in_flight_is_not_a_lost_index(self):
        del self.s3.objects[self.index_key]
        part_key = self.own["archivals"][0]["part_key"]
        month_dir = self.index_key[: -len("index.json")]
        for key in [k for k in self.s3.objects if k.startswith(part_key.rsplit("/", 1)[0] + "/")]:
            self.s3.objects[f"{month_dir}pending/{key.rsplit('/', 1)[1]}.json"] = (b"{}", {})
        got = self.lookup()
        self.assertEqual((got["archivals"], got["details_source"]), ([], "none"))

    def test_a_lost_shared_index_is_an_error_not_none(self):
        # A packed shop-month's only record is the month's shared index: lost, its parts remain.
        s3, expected = SnapshotS3.from_vectors()
        packed = next(w for w in expected["lookups"] if w["case"].startswith("shared part, conflict"))
        key = f"job-details-index/_shared/{packed['archivals'][0]['month']}/shared.json"
        del s3.objects[key]
        reader = ArchiveReader("vectors", s3=s3)
        for kw in ({}, {"completed_at": packed["archivals"][0]["completed_at"]}):
            with self.subTest(**kw):
                with self.assertRaises(CorruptObjectError) as ctx:
                    reader.lookup(packed["shop_id"], packed["job_id"], **kw)
                self.assertEqual(ctx.exception.key, key)
                self.assertIn("1 committed shared part(s)", str(ctx.exception))
        # A shared part whose first archival is still in flight is no lost index.
        for k in [k for k in s3.objects if k.startswith("job-details-cold/_shared/")]:
            s3.objects[f"{key[:-len('shared.json')]}pending/{k.rsplit('/', 1)[1]}.json"] = (b"{}", {})
        got = reader.lookup(packed["shop_id"], packed["job_id"])
        self.assertEqual((got["archivals"], got["details_source"]), ([], "none"))

    def test_a_damaged_index_is_an_error_not_none(self):
        data, meta = self.s3.objects[self.index_key]
        self.s3.objects[self.index_key] = (data[: len(data) // 2], meta)
        with self.assertRaises(CorruptObjectError) as ctx:
            self.lookup()
        self.assertIn(self.index_key, str(ctx.exception))

    def test_a_settled_parts_damaged_range_names_the_part_never_hides_its_edge_jobs(self):
        # The own month's first part (settled, a job filter, one block of two jobs): a `last` lowered
        # below its last job, or a first `dir` id raised above its first, puts that job outside its
        # range. Its filter holds it: the edge block is read, its record out of range is damage — an
        # error, or (the last job has a hot copy and later archivals) a warning naming the part, never
        # "not archived"; its later archivals still answer.
        data, meta = self.s3.objects[self.index_key]
        index = json.loads(gzip.decompress(data).decode())
        part = index["parts"][0]
        first, last = part["dir"][0], part["last"]
        self.assertIn("jf", part)
        at = self.own["archivals"][0]["completed_at"]

        def damage(edit):
            damaged = {**index, "parts": [{**part, **edit}, *index["parts"][1:]]}
            self.s3.objects[self.index_key] = (gzip.compress(json.dumps(damaged).encode()), meta)

        damage({"dir": [first[:-1] + chr(ord(first[-1]) + 1)]})
        with self.assertRaises(CorruptObjectError) as ctx:
            self.reader.lookup(self.own["shop_id"], first, completed_at=at)
        self.assertIn(f"part {part['name']}: block 0 holds job {first}, outside its range", str(ctx.exception))
        damage({"last": first})
        got = self.reader.lookup(self.own["shop_id"], last, completed_at=at)
        self.assertEqual(got["provenance"]["source"], "both")
        self.assertEqual(len(got["archivals"]), 2)
        self.assertNotIn(f"/{part['name']}", "".join(a["part_key"] for a in got["archivals"]))
        self.assertIn(f"part {part['name']}: block 0 holds job {last}, outside its range",
                      "\n".join(got["provenance"]["warnings"]))

    def test_a_missing_settled_part_is_named_and_what_exists_answers(self):
        # The own month's first part (settled) removed outside the archiver: its job with a hot copy
        # reads hot, the part named in a warning (as the TypeScript reader does); its job with nothing
        # else is PartMissingError naming the part, never "not archived".
        data, _ = self.s3.objects[self.index_key]
        part = json.loads(gzip.decompress(data).decode())["parts"][0]
        self.assertIn("dir", part)
        key = self.own["archivals"][0]["part_key"]
        self.assertTrue(key.endswith("/" + part["name"]))
        first, last = part["dir"][0], part["last"]
        at = self.own["archivals"][0]["completed_at"]
        del self.s3.objects[key]
        got = self.reader.lookup(self.own["shop_id"], last, completed_at=at)
        # Its other archival (a later part of the month) and its hot copy answer.
        self.assertIn(got["provenance"]["source"], ("hot", "both"))
        self.assertEqual([a["part_key"] for a in got["archivals"] if a["part_key"] == key], [])
        self.assertIsNotNone(got["details"])
        self.assertIn(key, "\n".join(got["provenance"]["warnings"]))
        with self.assertRaises(PartMissingError) as ctx:
            self.reader.lookup(self.own["shop_id"], first, completed_at=at)
        self.assertEqual(ctx.exception.key, key)

    def _retried(self):
        """The retried job (three archivals in the own month: two settled parts, then a part with
        entries), its parts in order, and a copy of the bucket without its hot objects."""
        s3, expected = SnapshotS3.from_vectors()
        retried = next(w for w in expected["lookups"] if w["case"].startswith("own parts, retried"))
        keys = [a["part_key"] for a in retried["archivals"]]
        self.assertEqual(len(keys), 3)
        cold = SnapshotS3({k: v for k, v in self.s3.objects.items() if k not in retried["hot_keys"]})
        return retried, keys, cold

    def _read_around(self, s3, retried, damaged, kw):
        got = ArchiveReader("vectors", s3=s3).lookup(retried["shop_id"], retried["job_id"], **kw)
        # A settled part's archival is known only from its block: left out. An entry's is listed (its
        # index entry), its status None: its record was not read (as the TypeScript reader lists it).
        settled = damaged != retried["archivals"][2]["part_key"]
        want = [(a["part_key"], None if a["part_key"] == damaged else a["status"])
                for a in retried["archivals"] if not (settled and a["part_key"] == damaged)]
        self.assertEqual([(a["part_key"], a["status"]) for a in got["archivals"]], want)
        self.assertIsNotNone(got["details"])
        self.assertIn(damaged, "\n".join(got["provenance"]["warnings"]))
        return got

    def test_a_damaged_settled_block_leaves_out_only_its_archival(self):
        # The retried job's second archival is in a settled part whose directory names its block: that
        # block damaged (bytes zeroed), or the part shorter than the directory says, is left out with a
        # warning naming it; the other archivals (and the hot copy) still answer, with or without the
        # hot copy, the month known or not (as the TypeScript reader's readSettled `left` does).
        retried, keys, cold = self._retried()
        for s3 in (self.s3, cold):
            for cut in (False, True):
                data, meta = self.s3.objects[keys[1]]
                saved = s3.objects[keys[1]]
                s3.objects[keys[1]] = (data[:8] if cut else bytes(len(data)), meta)
                for kw in ({}, {"completed_at": retried["archivals"][1]["completed_at"]}):
                    with self.subTest(hot=s3 is self.s3, cut=cut, **kw):
                        self._read_around(s3, retried, keys[1], kw)
                s3.objects[keys[1]] = saved

    def test_damage_found_reading_the_records_is_a_warning_while_anything_else_answers(self):
        # The retried job's third archival (a part with entries): its record block damaged, or out of
        # the part's range (the part cut short), is left out with a warning naming it while the other
        # archivals or the hot copy answer; with nothing else it is the error naming the part.
        retried, keys, cold = self._retried()
        for s3 in (self.s3, cold):
            for cut in (False, True):
                data, meta = self.s3.objects[keys[2]]
                saved = s3.objects[keys[2]]
                s3.objects[keys[2]] = (data[:8] if cut else bytes(len(data)), meta)
                with self.subTest(hot=s3 is self.s3, cut=cut):
                    self._read_around(s3, retried, keys[2], {})
                s3.objects[keys[2]] = saved
        for k in keys:
            data, meta = cold.objects[k]
            cold.objects[k] = (bytes(len(data)), meta)
        with self.assertRaises(CorruptObjectError) as ctx:
            ArchiveReader("vectors", s3=cold).lookup(retried["shop_id"], retried["job_id"])
        self.assertIn(keys[0], str(ctx.exception))

    def test_a_damaged_month_index_leaves_out_that_month_only(self):
        # vec-b: its own month 2026-11 holds the job, the month 2026-09 is packed (the shared index):
        # that shared index damaged, the month unknown, nothing hot: the 2026-11 archival answers and
        # the damaged index is named (the TypeScript reader's readIndexes `failed`), never the error.
        s3, expected = SnapshotS3.from_vectors()
        want = next(w for w in expected["lookups"] if w["case"].startswith("row expired before archival"))
        self.assertEqual(want["hot_keys"], [])
        key = "job-details-index/_shared/2026-09/shared.json"
        data, meta = s3.objects[key]
        s3.objects[key] = (data[: len(data) // 2], meta)
        got = ArchiveReader("vectors", s3=s3).lookup(want["shop_id"], want["job_id"])
        self.assertEqual([a["part_key"] for a in got["archivals"]], [a["part_key"] for a in want["archivals"]])
        self.assertIn(key, "\n".join(got["provenance"]["warnings"]))

    def test_a_part_past_the_retention_horizon_is_named_expired_not_read(self):
        # retention_months (the deployment's retentionMonths; 0, the default: forever): a part past
        # written + retention is not served even while it exists, no GET of it (the TypeScript
        # reader's expiredPart): left out with a warning while anything else answers, else
        # ArchiveExpiredError naming it; a search names it, not searched. The vectors' parts were
        # written 2026-11-29 and 2027-03-29: on 2027-01-15, one month's retention expired the first.
        from datetime import datetime, timezone
        clock = lambda: datetime(2027, 1, 15, tzinfo=timezone.utc)  # noqa: E731
        reader = ArchiveReader("vectors", s3=self.s3, retention_months=1, clock=clock)
        own_key = self.own["archivals"][0]["part_key"]
        with self.assertRaises(ArchiveExpiredError) as ctx:
            reader.lookup(self.own["shop_id"], self.own["job_id"])
        self.assertEqual(ctx.exception.key, own_key)
        retried, keys, _ = self._retried()
        got = reader.lookup(retried["shop_id"], retried["job_id"])
        self.assertEqual([a["part_key"] for a in got["archivals"]], [keys[2]])
        warnings = "\n".join(got["provenance"]["warnings"])
        self.assertIn(f"archival left out: archive {keys[0]}", warnings)
        self.assertIn(keys[1], warnings)
        self.assertNotIn(keys[0], got["provenance"]["parts"])
        found = reader.search(retried["shop_id"], "rocbqeko6wjam-r")
        self.assertEqual([j["part_key"] for j in found["jobs"]], [keys[2]])
        self.assertIn(f"part not searched: archive {keys[1]}", "\n".join(found["provenance"]["warnings"]))
        # Forever (the default), or before the horizon: read as ever.
        for r in (ArchiveReader("vectors", s3=self.s3),
                  ArchiveReader("vectors", s3=self.s3, retention_months=2, clock=clock)):
            self.assertEqual(len(r.lookup(retried["shop_id"], retried["job_id"])["archivals"]), 3)
        with self.assertRaises(InvalidInputError):
            ArchiveReader("vectors", s3=self.s3, retention_months=-1)

    def test_a_hot_object_written_after_its_completion_was_archived_and_deleted_is_named(self):
        # The own job's completion is archived and its hot copies deleted; a flush found hot now was
        # written after that archival (a late flush): merged in, and named in a warning, since no
        # archive holds it yet (the TypeScript reader's lateHotObjects) — the completion known only.
        retried, _, _ = self._retried()
        flush = next(k for k in retried["hot_keys"] if not k.endswith("platform-data.json"))
        late = f"job-details/{self.own['job_id']}/{flush.rsplit('/', 1)[1]}"
        self.s3.objects[late] = self.s3.objects[flush]
        got = self.lookup(completed_at=self.own["archivals"][0]["completed_at"])
        self.assertEqual(got["hot_keys"], [late])
        self.assertIn(f"1 hot object(s) found after this completion was archived in "
                      f"{self.own['archivals'][0]['part_key']}", "\n".join(got["provenance"]["warnings"]))
        self.assertIn(late, "\n".join(got["provenance"]["warnings"]))
        self.assertEqual(self.lookup()["provenance"]["warnings"], [])

    def test_an_entry_whose_completion_is_neither_form_is_damage(self):
        data, meta = self.s3.objects[self.index_key]
        header = json.loads(gzip.decompress(data).decode().split("\n")[0])
        for entries in header["jobs"].values():
            for e in entries:
                e["completed"] = 1.5
        self.s3.objects[self.index_key] = (gzip.compress((json.dumps(header) + "\n").encode()), meta)
        with self.assertRaises(CorruptObjectError) as ctx:
            self.lookup()
        self.assertIn("needs completed", str(ctx.exception))

    def _with_completed(self, text):
        """The index with every entry's `completed` replaced by the raw JSON `text` (None: removed)."""
        data, meta = self.s3.objects[self.index_key]
        header = json.loads(gzip.decompress(data).decode().split("\n")[0])
        for entries in header["jobs"].values():
            for e in entries:
                e["completed"] = "@COMPLETED@"
                if text is None:
                    del e["completed"]
        raw = json.dumps(header, separators=(",", ":")).replace('"@COMPLETED@"', text or "")
        self.s3.objects[self.index_key] = (gzip.compress((raw + "\n").encode()), meta)

    def test_completed_written_as_1_0_reads_as_1_and_the_refused_are_named(self):
        # The mixed month's retried job: its first archivals are in settled parts (the records'
        # completions), its last in the part with entries (the entry's).
        s3, expected = SnapshotS3.from_vectors()
        mixed = next(w for w in expected["lookups"] if w["case"].startswith("own parts,"))
        self.assertEqual(mixed["archivals"][0]["month"], self.own["archivals"][0]["month"])
        self._with_completed("1.0")
        got = self.reader.lookup(mixed["shop_id"], mixed["job_id"])
        want = [a["completed_at"] for a in mixed["archivals"]]
        self.assertEqual([a["completed_at"] for a in got["archivals"]],
                         want[:-1] + [f"{mixed['archivals'][0]['month']}-01T00:00:00.001Z"])
        for text, named in (("1.5", "not 1.5"), (None, "not absent"), ("null", "not null"), ("[0]", "not [0]")):
            self.setUp()
            self._with_completed(text)
            with self.assertRaises(CorruptObjectError) as ctx:
                self.lookup()
            self.assertIn(named, str(ctx.exception), text)

    def test_a_pre_release_index_is_refused_with_the_fix(self):
        data, meta = self.s3.objects[self.index_key]
        text = gzip.decompress(data).decode().split("\n")[0]
        header = json.loads(text)
        header["format"] = "job-details-archive/index@5"
        self.s3.objects[self.index_key] = (gzip.compress((json.dumps(header) + "\n").encode()), meta)
        with self.assertRaises(UnsupportedFormatError) as ctx:
            self.lookup()
        self.assertIn("rebuild the local data", str(ctx.exception))

    def _outgrow_first_read(self, edit=None):
        """The own month's index with a first job block of ~85 KB of noise: the job's entry block lies
        past the first 64 KB read. `edit(header)` may change the header (its block directory)."""
        data, meta = self.s3.objects[self.index_key]
        header = json.loads(gzip.decompress(data).decode().split("\n")[0])
        jobs = header.pop("jobs")
        noise = gzip.compress((json.dumps({"jobs": {"0": [{"completed": 0, "pad": os.urandom(80000).hex()}]}}) + "\n").encode())
        real = gzip.compress((json.dumps({"jobs": jobs}) + "\n").encode())
        ids = sorted(jobs)
        header["blocks"] = [{"first": "0", "last": "0", "offset": 0, "length": len(noise)},
                            {"first": ids[0], "last": ids[-1], "offset": len(noise), "length": len(real)}]
        if edit:
            edit(header)
        self.s3.objects[self.index_key] = (gzip.compress((json.dumps(header) + "\n").encode()) + noise + real, meta)
        return ids

    def test_a_settled_month_past_the_first_read_reads_the_record_block_its_directory_names(self):
        want = self.lookup()
        calls = self.s3.calls
        ids = self._outgrow_first_read()
        got = self.lookup()
        # The same answer with as many requests: the record block instead of the entry block.
        self.assertEqual(comparable(got), comparable(want))
        self.assertEqual(self.s3.calls - calls, calls)
        # A job id inside a part's range that its block does not hold: not archived, no error.
        absent = ids[0][:-1] + chr(ord(ids[0][-1]) + 1)
        got = self.reader.lookup(self.own["shop_id"], absent)
        self.assertEqual((got["archivals"], got["details_source"]), ([], "none"))

    def test_a_damaged_block_directory_is_damage_not_none(self):
        def damage(header):
            header["parts"][0]["last"] = "0"
        self._outgrow_first_read(damage)
        with self.assertRaises(CorruptObjectError) as ctx:
            self.lookup()
        self.assertIn("block directory", str(ctx.exception))

    def test_a_probed_part_in_a_glacier_class_needs_its_restore(self):
        self._outgrow_first_read()
        self.s3.glacier.add(self.own["archivals"][0]["part_key"])
        with self.assertRaises(NeedsRestoreError) as ctx:
            self.lookup()
        self.assertIn(self.own["archivals"][0]["part_key"], str(ctx.exception))

    def test_settled_candidates_skip_blocks_without_jobs_and_name_platform_data_elsewhere(self):
        from job_details_archive.format import index_from_members, settled_candidates
        part = {"name": "part-20260215T030000Z-aaaaaaaa.jsonl.gz", "size": 400, "etag": "e",
                "committed_at": "t", "job_count": 3, "deleted_at": "d", "block_bytes": [100, 50, 150, 100],
                "dir": ["abc", None, "abe", "ac"], "last": "ac9", "dir_pd": [[2, 1]]}
        header = {"format": "job-details-archive/index@1.0", "shop_id": "s.myshopify.com", "month": "2026-01",
                  "parts": [part], "jobs": {}}
        index = index_from_members(header, [], "k")
        got = settled_candidates(index, "abzz")
        self.assertEqual([(p["block"], p["range"], p["pd_range"], p["below"]) for p in got],
                         [(2, (150, 150), (100, 50), "ac")])
        self.assertEqual([p["block"] for p in settled_candidates(index, "abd")], [0])
        self.assertEqual(settled_candidates(index, "ab"), [])
        for bad in ({"dir": ["abc", None, "abb", "ac"]}, {"dir": [None, None, None, None]}, {"dir_pd": [[2, 9]]},
                    {"deleted_at": None}, {"job_count": 0}, {"shared": True}, {"last": "ab"},
                    # Blocks ending before the part's records: the jobs after them would go unread.
                    {"block_bytes": [100, 50, 150], "dir": ["abc", None, "abe"]}, {"block_bytes": [100, 50, 150, 90]}):
            with self.assertRaises(CorruptObjectError) as ctx:
                index_from_members({**header, "parts": [{**part, **bad}]}, [], "k")
            self.assertIn(part["name"], str(ctx.exception))
        # With entries pointing at it, the part is not settled: its entries answer.
        with_entries = index_from_members({**header, "jobs": {"abd": [{"completed": 0}]}}, [], "k")
        self.assertIsNone(with_entries["parts"][0]["settled"])
        self.assertEqual(settled_candidates(with_entries, "abd"), [])

    def _settled(self):
        """The orphan's month (a settled part, no entries) and the own month's settled part's id range."""
        s3, expected = SnapshotS3.from_vectors()
        orphan = next(w for w in expected["lookups"] if w["case"].startswith("row expired"))
        own_ids = sorted(w["job_id"] for w in expected["lookups"] if w["case"].startswith("own part"))
        return orphan, own_ids

    def test_a_settled_month_with_no_entries_reads_in_3_requests(self):
        orphan, _ = self._settled()
        key = f"job-details-index/{orphan['shop_id']}/{orphan['archivals'][0]['month']}/index.json"
        header = json.loads(gzip.decompress(self.s3.objects[key][0]).decode().split("\n")[0])
        self.assertEqual(header["jobs"], {})
        self.assertIn("dir", header["parts"][0])
        calls = self.s3.calls
        got = self.reader.lookup(orphan["shop_id"], orphan["job_id"], completed_at=orphan["archivals"][0]["completed_at"])
        self.assertEqual(comparable(got), comparable(orphan))
        # The hot check, the index, the record block its directory names (read once).
        self.assertEqual((self.s3.calls - calls, got["provenance"]["requests"]), (3, 3))

    def _absent(self, first, last, matched):
        """An id inside the own settled part's range, not a job of it, that its job filter matches
        (a false match, 1 in 128) or not."""
        from job_details_archive.format import parse_month_index, settled_candidates
        index = parse_month_index(self.s3.objects[self.index_key][0], self.index_key)
        self.assertIsNotNone(index["parts"][0]["settled"]["job_filter"])
        for i in range(100000):
            job_id = f"{first}-{i}"
            if first < job_id < last and bool(settled_candidates(index, job_id)) == matched:
                return job_id
        raise AssertionError("no such id")

    def _outside(self):
        """An id below every part's range that no part's job filter matches: "0" unless a filter
        matches it (1 in 128 for a part with edge reads, should the vectors be regenerated), else the
        first "0-i" none matches (as the TypeScript test picks it)."""
        from job_details_archive.format import parse_month_index, settled_candidates
        index = parse_month_index(self.s3.objects[self.index_key][0], self.index_key)
        for job_id in ["0", *(f"0-{i}" for i in range(5000))]:
            if not settled_candidates(index, job_id):
                return job_id
        raise AssertionError("no such id")

    def test_an_absent_id_in_a_settled_parts_range_is_none_by_its_job_filter_or_after_its_block(self):
        _, (first, last) = self._settled()
        at = self.own["archivals"][0]["completed_at"]
        # Its job filter does not match: the index alone answers (the hot check and the index).
        got = self.reader.lookup(self.own["shop_id"], self._absent(first, last, False), completed_at=at)
        self.assertEqual((got["archivals"], got["details_source"], got["provenance"]["requests"]), ([], "none", 2))
        # A false match: the block its directory names is read and does not hold it.
        got = self.reader.lookup(self.own["shop_id"], self._absent(first, last, True), completed_at=at)
        self.assertEqual((got["archivals"], got["details_source"], got["provenance"]["requests"]), ([], "none", 3))
        # Outside every part's range: the index alone answers.
        got = self.reader.lookup(self.own["shop_id"], self._outside(), completed_at=at)
        self.assertEqual((got["archivals"], got["provenance"]["requests"]), ([], 2))

    def test_a_settled_part_in_a_glacier_class_is_named_whenever_it_may_hold_the_job(self):
        _, (first, last) = self._settled()
        at = self.own["archivals"][0]["completed_at"]
        part = self.own["archivals"][0]["part_key"]
        self.s3.glacier.add(part)
        # Its job, or an id its filter matches: whether it holds it takes a restore, never "none".
        for job_id in (self.own["job_id"], self._absent(first, last, True)):
            with self.subTest(job_id=job_id):
                with self.assertRaises(NeedsRestoreError) as ctx:
                    self.reader.lookup(self.own["shop_id"], job_id, completed_at=at)
                self.assertEqual(ctx.exception.key, part)
        # An id its filter does not match, or outside its range: not archived there, no restore.
        for job_id in (self._absent(first, last, False), self._outside()):
            self.assertEqual(self.reader.lookup(self.own["shop_id"], job_id, completed_at=at)["archivals"], [])

    def test_a_job_of_another_shop_reads_as_absent(self):
        got = self.reader.lookup("vec-a.myshopify.com", self.own["job_id"])
        self.assertEqual((got["details"], got["archivals"], got["details_source"]), (None, [], "none"))


class IndexRace(unittest.TestCase):
    """A month index larger than the first read is read in two GETs (its first 64 KB, then the job's
    entry block); a concurrent archival may rewrite it, or reindex remove it, between the two. The
    later read carries If-Match with the first read's ETag (as the TypeScript lookupIndex does): a 412
    (or a 404: removed) reads the month again from its first read, 3 attempts at most, then
    ConcurrentModificationError names the index. The race is put between the two GETs by SnapshotS3's
    `after_get` (emulated: no emulator can be made to hit it between two given requests)."""

    def setUp(self):
        self.s3, expected = SnapshotS3.from_vectors()
        self.retried = next(w for w in expected["lookups"] if w["case"].startswith("own parts, retried"))
        month = self.retried["archivals"][-1]["month"]
        self.key = f"job-details-index/{self.retried['shop_id']}/{month}/index.json"
        data, self.meta = self.s3.objects[self.key]
        self.header = json.loads(gzip.decompress(data).decode().split("\n")[0])
        self.assertIn(self.retried["job_id"], self.header["jobs"])

    def big_index(self, seed, shift_ms=0, parts=0):
        """The month index with 8,000 more jobs (entries in its last part, the one with entries), as
        the writer lays it out (month-index-write.ts serializeMonthIndex): a header member with
        `blocks`, then one gzip member per run of job ids in code-point order, each ≤ 32,768 bytes of
        JSON. `seed` picks the extra ids (so each version's offsets differ); `shift_ms` moves the
        retried job's completion (a version whose answer differs); `parts` more parts (no entries, after
        the others) make the header member itself longer than the first read (then read whole)."""
        import random
        rnd = random.Random(seed)
        header = copy.deepcopy(self.header)
        jobs = header.pop("jobs")
        for e in jobs[self.retried["job_id"]]:
            e["completed"] += shift_ms
        last = len(header["parts"]) - 1
        alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
        for i in range(parts):
            suffix = "".join(rnd.choice(alphabet) for _ in range(8))
            header["parts"].append({
                "name": f"part-20261201T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{suffix}.jsonl.gz",
                "size": 1000 + rnd.randrange(100000), "etag": "%032x" % rnd.getrandbits(128),
                "run_id": f"local-{rnd.getrandbits(40)}-{suffix}", "committed_at": "2026-12-01T00:00:00.000Z",
                "job_count": 1, "deleted_at": None})
        while len(jobs) < 8001:
            job_id = "".join(rnd.choice(alphabet) for _ in range(13))
            jobs.setdefault(job_id, [{"part": last, "pd_block": None, "completed": rnd.randrange(2_000_000_000)}])

        def line(value):
            return gzip.compress((json.dumps(value, separators=(",", ":")) + "\n").encode(), mtime=0)

        chunks, current, size = [], {}, 0
        for job_id in sorted(jobs):
            n = len(json.dumps(job_id)) + len(json.dumps(jobs[job_id], separators=(",", ":"))) + 2
            if size > 0 and size + n > 32 * 1024:
                chunks.append(current)
                current, size = {}, 0
            current[job_id] = jobs[job_id]
            size += n
        chunks.append(current)
        members = [line({"jobs": c}) for c in chunks]
        blocks, offset = [], 0
        for c, m in zip(chunks, members):
            blocks.append({"first": min(c), "last": max(c), "offset": offset, "length": len(m)})
            offset += len(m)
        head = line({**header, "blocks": blocks})
        self.assertEqual(len(head) > INDEX_FIRST_READ_BYTES, parts > 0)
        block = next(b for b in blocks if b["first"] <= self.retried["job_id"] <= b["last"])
        # The job's entry block lies past the first read: a second GET of the index.
        self.assertGreater(len(head) + block["offset"], INDEX_FIRST_READ_BYTES)
        return head + b"".join(members)

    def put(self, data):
        self.s3.objects[self.key] = (data, self.meta)

    def rewrite_after_first_reads(self, versions):
        """After each first read of the index (its first 64 KB), the next of `versions` (None:
        removed) replaces it, before the reader's next GET."""
        pending = list(versions)

        def after_get(key, byte_range):
            if key == self.key and byte_range == f"bytes=0-{INDEX_FIRST_READ_BYTES - 1}" and pending:
                data = pending.pop(0)
                if data is None:
                    del self.s3.objects[self.key]
                else:
                    self.put(data)
        self.s3.after_get = after_get
        return pending

    def lookup(self, s3=None):
        return ArchiveReader("vectors", s3=s3 or self.s3).lookup(self.retried["shop_id"], self.retried["job_id"])

    def test_the_emulated_conditional_get(self):
        data = self.s3.objects[self.key][0]
        etag = SnapshotS3.etag(data)
        self.assertEqual(etag, '"' + hashlib.md5(data).hexdigest() + '"')
        self.assertEqual(self.s3.get_object(Bucket="b", Key=self.key)["ETag"], etag)
        for same in (etag, etag.strip('"'), "*"):
            got = self.s3.get_object(Bucket="b", Key=self.key, Range="bytes=0-9", IfMatch=same)
            self.assertEqual((got["Body"].read(), got["ETag"]), (data[:10], etag))
        with self.assertRaises(ClientError) as ctx:
            self.s3.get_object(Bucket="b", Key=self.key, Range="bytes=0-9", IfMatch='"0123"')
        err = ctx.exception.response
        self.assertEqual((err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]), ("PreconditionFailed", 412))
        with self.assertRaises(ClientError) as ctx:
            self.s3.get_object(Bucket="b", Key=self.key + ".absent", IfMatch=etag)
        self.assertEqual(ctx.exception.response["Error"]["Code"], "NoSuchKey")

    def test_a_big_index_read_whole_or_in_two_gets_answers_as_the_vectors(self):
        self.put(self.big_index(1))
        self.assertEqual(comparable(self.lookup()), comparable(self.retried))

    def test_an_index_rewritten_between_its_reads_is_read_again_from_the_new_version(self):
        # The reader's first read is of a version in which the job completed 1 s later; the index is
        # rewritten (other offsets) before its block read: 412, then one more attempt, all of the new one.
        new = self.big_index(2)
        self.put(new)
        calls = self.s3.calls
        want = self.lookup()
        quiet = self.s3.calls - calls
        self.assertEqual(comparable(want), comparable(self.retried))
        self.put(self.big_index(1, shift_ms=1000))
        self.rewrite_after_first_reads([new])
        calls = self.s3.calls
        got = self.lookup()
        self.assertEqual(comparable(got), comparable(self.retried))
        self.assertEqual(got["provenance"]["warnings"], [])
        # The first read and the refused block read, then both again.
        self.assertEqual((self.s3.calls - calls, got["provenance"]["requests"]), (quiet + 2, quiet + 2))

    def test_an_index_whose_header_outgrows_the_first_read_is_read_whole_of_the_same_version(self):
        new = self.big_index(2, parts=2500)
        self.put(new)
        calls = self.s3.calls
        self.assertEqual(comparable(self.lookup()), comparable(self.retried))
        quiet = self.s3.calls - calls
        self.put(self.big_index(1, shift_ms=1000, parts=2500))
        self.rewrite_after_first_reads([new])
        calls, gets = self.s3.calls, len(self.s3.gets)
        got = self.lookup()
        self.assertEqual((comparable(got), got["provenance"]["warnings"]), (comparable(self.retried), []))
        self.assertEqual(self.s3.calls - calls, quiet + 2)
        # Each attempt: its first 64 KB, then the whole index of that version (refused, then read).
        reads = [(r, m) for k, r, m in self.s3.gets[gets:] if k == self.key]
        self.assertEqual([r for r, _ in reads], [f"bytes=0-{INDEX_FIRST_READ_BYTES - 1}", None] * 2)
        self.assertEqual([m for _, m in reads[1::2]], [SnapshotS3.etag(self.big_index(1, shift_ms=1000, parts=2500)),
                                                       SnapshotS3.etag(new)])

    def test_an_index_removed_between_its_reads_is_read_again_and_named_lost(self):
        # Nothing hot: the lost index is the error, as when it was missing from the start.
        cold = SnapshotS3({k: v for k, v in self.s3.objects.items() if k not in self.retried["hot_keys"]})
        self.s3 = cold
        del cold.objects[self.key]
        with self.assertRaises(MissingIndexError) as missing:
            self.lookup()
        self.put(self.big_index(1))
        self.rewrite_after_first_reads([None])
        with self.assertRaises(MissingIndexError) as ctx:
            self.lookup()
        self.assertEqual((ctx.exception.key, str(ctx.exception)), (self.key, str(missing.exception)))

    def test_an_index_rewritten_between_every_two_reads_is_an_error_naming_it(self):
        self.put(self.big_index(1))
        versions = [self.big_index(seed) for seed in (2, 3, 4)]
        left = self.rewrite_after_first_reads(versions)
        with self.assertRaises(ConcurrentModificationError) as ctx:
            self.lookup()
        self.assertEqual(ctx.exception.key, self.key)
        self.assertIn(self.key, str(ctx.exception))
        # Three attempts, each a first read and a block read bound to that read's version (refused).
        reads = [(r, m) for k, r, m in self.s3.gets if k == self.key]
        first = f"bytes=0-{INDEX_FIRST_READ_BYTES - 1}"
        self.assertEqual([r == first for r, _ in reads], [True, False] * 3)
        self.assertEqual([m for _, m in reads[1::2]],
                         [SnapshotS3.etag(v) for v in (self.big_index(1), *versions[:2])])
        self.assertEqual(left, [])


if __name__ == "__main__":
    unittest.main()
