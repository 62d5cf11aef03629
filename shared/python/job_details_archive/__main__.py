"""python3 -m job_details_archive lookup --shop S --job J [--completed-at ISO] [--bucket B]
python3 -m job_details_archive search --shop S --doc D [--bucket B]

Prints the job as JSON (details, platform data, archived row, archivals, provenance). Endpoints,
credentials and the bucket come from the environment `jobarchive up` prints (AWS_ENDPOINT_URL_S3,
AWS_ACCESS_KEY_ID, …, ECOM_JOB_DETAILS_BUCKET). Exit 0 found, 1 not found anywhere, 2 an error.
"""
import argparse
import os
import sys

from .errors import ArchiveError
from .format import canonical_json
from .reader import ArchiveReader


def _months(text):
    """A whole number of months, 0 or more (--retention-months, $JDA_RETENTION_MONTHS)."""
    try:
        months = int(text)
    except ValueError:
        months = -1
    if months < 0:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of months, 0 or more (--retention-months or $JDA_RETENTION_MONTHS), got {text!r}")
    return months


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m job_details_archive")
    sub = ap.add_subparsers(dest="command", required=True)
    lk = sub.add_parser("lookup", help="one job's details, platform data and provenance, as JSON")
    lk.add_argument("--shop", required=True)
    lk.add_argument("--job", required=True)
    lk.add_argument("--completed-at", help="the job's completion (ISO): reads that month's index only")
    lk.add_argument("--bucket", default=os.environ.get("ECOM_JOB_DETAILS_BUCKET"))
    lk.add_argument("--search-months", type=int, default=24)
    lk.add_argument("--restore-days", type=int, help="request a Glacier restore of this many days when needed")
    # A string default goes through `type` too: a bad $JDA_RETENTION_MONTHS is a usage error (exit 2).
    retention = dict(type=_months, default=os.environ.get("JDA_RETENTION_MONTHS") or "0",
                     help="the deployment's retentionMonths (0: forever; default $JDA_RETENTION_MONTHS): "
                          "parts past it are expired, not read")
    lk.add_argument("--retention-months", **retention)
    sr = sub.add_parser("search", help="the archived jobs of a shop whose details list a document, as JSON")
    sr.add_argument("--shop", required=True)
    sr.add_argument("--doc", required=True)
    sr.add_argument("--bucket", default=os.environ.get("ECOM_JOB_DETAILS_BUCKET"))
    sr.add_argument("--retention-months", **retention)
    args = ap.parse_args(argv)
    if not args.bucket:
        print("lookup: no bucket: pass --bucket or set ECOM_JOB_DETAILS_BUCKET", file=sys.stderr)
        return 2
    try:
        if args.command == "search":
            found = ArchiveReader(args.bucket, retention_months=args.retention_months).search(args.shop, args.doc)
            print(canonical_json({"shop_id": args.shop, "doc_id": args.doc, **found}))
            # What could not be searched: loud, on stderr, whatever stdout is piped to (as `jobarchive search`).
            prov = found["provenance"]
            for w in prov["warnings"]:
                print(f"search: {w}", file=sys.stderr)
            if prov["parts_not_searched"]:
                print(f"search: NOT SEARCHED: {len(prov['parts_not_searched'])} part(s) in Glacier Flexible "
                      f"Retrieval / Deep Archive (their filters need a restore): "
                      f"{', '.join(prov['parts_not_searched'])} - restore them and search again", file=sys.stderr)
            return 0
        reader = ArchiveReader(args.bucket, search_months=args.search_months, restore_days=args.restore_days,
                               retention_months=args.retention_months)
        job = reader.lookup(args.shop, args.job, args.completed_at)
    except (ArchiveError, ValueError) as err:
        print(f"lookup: {err}", file=sys.stderr)
        return 2
    print(canonical_json(job))
    found = job["hot_keys"] or job["archivals"]
    if not found:
        print(f"lookup: job {args.job} of {args.shop} not found (no hot objects, no archival in the months read)",
              file=sys.stderr)
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
