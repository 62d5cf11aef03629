#!/usr/bin/env python3
"""A job written the way docs/wire-format.md says, with the standard library and boto3 only.

    python3 write_job.py vectors VECTORS_JSON
        checks the contract's test vectors (flush ids, payload bytes, the rows of a job) against this
        implementation; the rows are written to --table in DynamoDB and read back.
    python3 write_job.py job --table T --bucket B --shop S --completed-at ISO [--exact-numbers]
        creates a job, flushes two batches of chunks (S3 object, then one UpdateItem each), writes its
        platform data, completes it, and prints {"job_id", "completed_at", "details", "platform_data"}
        plus their canonical JSON ("details_json", "platform_data_json"). --exact-numbers puts integers
        a float64 cannot hold (2^63-1, 2^53+1, 20 digits) in a conflict item and the platform data.

Endpoints and credentials come from the environment (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION), as for any boto3 program.
"""
import argparse
import gzip
import hashlib
import json
import os
import secrets
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import boto3
from botocore.config import Config

BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
TTL_DAYS = 90


def canonical_json(value):
    """Sorted keys, no spaces, UTF-8 as is (the contract's serialization)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def flush_id(chunk_ids):
    """sha256 of the compact JSON array of the distinct chunk ids in code-point order; 16 hex chars."""
    return hashlib.sha256(canonical_json(sorted(set(chunk_ids))).encode("utf-8")).hexdigest()[:16]


def dedupe(items, key=lambda x: x):
    seen, out = set(), []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


def normalize(payload):
    """Chunk ids distinct and sorted; each reason's list deduplicated in first-occurrence order."""
    return {
        "chunk_ids": sorted(set(payload["chunk_ids"])),
        "failed": {r: dedupe(ids) for r, ids in payload["failed"].items()},
        "skipped": {r: dedupe(ids) for r, ids in payload["skipped"].items()},
        "conflict": {r: dedupe(items, canonical_json) for r, items in payload["conflict"].items()},
    }


def flush_body(payload):
    return gzip.compress(canonical_json(normalize(payload)).encode("utf-8"), mtime=0)


def timestamp(dt):
    """UTC, milliseconds, Z: 2026-03-01T10:01:00.000Z."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_job_id():
    bits = int.from_bytes(secrets.token_bytes(8), "big") << 1
    return "".join(BASE32[(bits >> (5 * i)) & 31] for i in range(12, -1, -1))


def clients():
    # AWS_REGION as the JavaScript SDK reads it; older botocore only knows AWS_DEFAULT_REGION.
    # Endpoints named explicitly too: botocore before 1.31 does not read AWS_ENDPOINT_URL_* itself.
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    env = os.environ.get
    s3_at = env("AWS_ENDPOINT_URL_S3") or env("AWS_ENDPOINT_URL")
    ddb_at = env("AWS_ENDPOINT_URL_DYNAMODB") or env("AWS_ENDPOINT_URL")
    s3 = boto3.client("s3", region_name=region, endpoint_url=s3_at, config=Config(s3={"addressing_style": "path"}))
    ddb = boto3.client("dynamodb", region_name=region, endpoint_url=ddb_at)
    return s3, boto3.resource("dynamodb", region_name=region, endpoint_url=ddb_at), ddb


def key_of(shop_id, job_id):
    return {"pk": f"SHOP#{shop_id}", "sk": f"JOB#{job_id}"}


def create_job(table, shop_id, job_id, now, total_items, job_type="full_sync", platform="shopify"):
    ts = timestamp(now)
    table.put_item(
        Item={
            **key_of(shop_id, job_id),
            "job_id": job_id,
            "job_status": "PENDING",
            "status_created_at": ts,
            "created_at": ts,
            "last_updated": ts,
            "total_items": total_items,
            "processed_items": 0,
            "failed_items": 0,
            "skipped_items": 0,
            "conflict_items": 0,
            "job_type": job_type,
            "platform": platform,
        },
        ConditionExpression="attribute_not_exists(pk)",
    )


def put_flush_object(s3, bucket, shop_id, job_id, payload):
    key = f"job-details/{job_id}/{flush_id(payload['chunk_ids'])}.json.gz"
    s3.put_object(
        Bucket=bucket,
        Key=key,
        Body=flush_body(payload),
        ContentType="application/json",
        ContentEncoding="gzip",
        Metadata={"shop-id": shop_id, "job-id": job_id},
    )
    return key


def record_flush(table, shop_id, job_id, chunk_ids, counts, now, first):
    """The flush UpdateItem; `first` folds PENDING -> IN_PROGRESS into it. Returns the new row values."""
    ts = timestamp(now)
    names = {"#cc": "completed_chunks"}
    values = {
        ":processed": counts["processed"],
        ":failed": counts["failed"],
        ":skipped": counts["skipped"],
        ":conflict": counts["conflict"],
        ":chunks": set(chunk_ids),
        ":ts": ts,
    }
    condition = ["attribute_exists(pk)"]
    for i, c in enumerate(chunk_ids):
        values[f":c{i}"] = c
        condition.append(f"NOT contains(#cc, :c{i})")
    update = (
        "ADD processed_items :processed, failed_items :failed, skipped_items :skipped, "
        "conflict_items :conflict, #cc :chunks SET last_updated = :ts"
    )
    if first:
        update += ", job_status = :inprog, started_at = if_not_exists(started_at, :ts), status_created_at = :ts"
        update += " REMOVE completed_at, #ttl"
        names["#ttl"] = "ttl"
        values.update({":inprog": "IN_PROGRESS", ":pending": "PENDING", ":failedStatus": "FAILED",
                       ":conflictStatus": "CONFLICT"})
        condition.append(
            "(attribute_not_exists(job_status) OR job_status IN (:pending, :failedStatus, :conflictStatus))"
        )
    out = table.update_item(
        Key=key_of(shop_id, job_id),
        UpdateExpression=update,
        ConditionExpression=" AND ".join(condition),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
        ReturnValues="UPDATED_NEW",
    )
    return out["Attributes"]


def write_terminal(table, shop_id, job_id, counters, now):
    status = "FAILED" if counters["failed_items"] > 0 else "CONFLICT" if counters["conflict_items"] > 0 else "COMPLETED"
    ts = timestamp(now)
    table.update_item(
        Key=key_of(shop_id, job_id),
        UpdateExpression="SET job_status = :terminal, completed_at = :ts, status_created_at = :ts, "
        "last_updated = :ts, #ttl = :ttl",
        ConditionExpression="job_status = :inprog",
        ExpressionAttributeNames={"#ttl": "ttl"},
        ExpressionAttributeValues={
            ":terminal": status,
            ":ts": ts,
            ":ttl": int(now.timestamp() + TTL_DAYS * 86400),
            ":inprog": "IN_PROGRESS",
        },
    )
    return status


def flush(s3, table, bucket, shop_id, job_id, total, batch, now, first):
    """One batch of chunks: the S3 object (when it has details), then the UpdateItem, then maybe done."""
    details = batch.get("details", {})
    payload = {"chunk_ids": batch["chunk_ids"], "failed": details.get("failed", {}),
               "skipped": details.get("skipped", {}), "conflict": details.get("conflict", {})}
    if any(payload[k] for k in ("failed", "skipped", "conflict")):
        put_flush_object(s3, bucket, shop_id, job_id, payload)
    row = record_flush(table, shop_id, job_id, batch["chunk_ids"], batch["counts"], now, first)
    counters = {k: int(row[k]) for k in ("processed_items", "failed_items", "skipped_items", "conflict_items")}
    if sum(counters.values()) >= total:
        write_terminal(table, shop_id, job_id, counters, now)
    return payload


def plain(value):
    """A boto3 item as the vectors write rows: sets as sorted lists, numbers as ints."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, Decimal):
        return int(value)
    return value


def check_vectors(path, table_name):
    v = json.load(open(path, encoding="utf-8"))
    failures = []
    for f in v["flush_ids"]:
        if flush_id(f["chunk_ids"]) != f["flush_id"]:
            failures.append(f"flush id of {f['chunk_ids']}: {flush_id(f['chunk_ids'])} != {f['flush_id']}")
        wrong = f.get("not_python_default_json_dumps")
        if wrong and hashlib.sha256(json.dumps(sorted(f["chunk_ids"])).encode()).hexdigest()[:16] != wrong:
            failures.append("the default json.dumps vector does not reproduce")
    for p in v["payloads"]:
        got = gzip.decompress(flush_body(p["input"])).decode("utf-8")
        if got != p["json"]:
            failures.append(f"payload bytes: {got} != {p['json']}")
    j = v["job"]
    _, dynamo, _ = clients()
    table = dynamo.Table(table_name)
    create_job(table, j["shop_id"], j["job_id"], parse_time(j["created_at"]), j["total_items"], j["job_type"],
               j["platform"])
    rows = [plain(table.get_item(Key=key_of(j["shop_id"], j["job_id"]), ConsistentRead=True)["Item"])]
    s3 = None
    for i, b in enumerate(j["flushes"]):
        s3 = s3 or clients()[0]
        row = record_flush(table, j["shop_id"], j["job_id"], b["chunk_ids"], b["counts"], parse_time(b["now"]), i == 0)
        counters = {k: int(row[k]) for k in ("processed_items", "failed_items", "skipped_items", "conflict_items")}
        if sum(counters.values()) >= j["total_items"]:
            write_terminal(table, j["shop_id"], j["job_id"], counters, parse_time(b["now"]))
        rows.append(plain(table.get_item(Key=key_of(j["shop_id"], j["job_id"]), ConsistentRead=True)["Item"]))
    for want, got in zip(j["rows"], rows):
        if want["row"] != got:
            failures.append(f"row after {want['after']}: {json.dumps(got, sort_keys=True)} != "
                            f"{json.dumps(want['row'], sort_keys=True)}")
    return failures


def write_job(args):
    s3, dynamo, _ = clients()
    table = dynamo.Table(args.table)
    done = parse_time(args.completed_at)
    created = done - timedelta(minutes=30)
    job_id = new_job_id()
    batches = [
        {"chunk_ids": ["preparse", "p0"], "counts": {"processed": 5, "failed": 2, "skipped": 1, "conflict": 0},
         "details": {"failed": {"timeout": ["py-1", "py-2"]}, "skipped": {"unpublished": ["py-3"]}}},
        {"chunk_ids": ["p1"], "counts": {"processed": 3, "failed": 0, "skipped": 0, "conflict": 1},
         "details": {"conflict": {"version_conflict": [{"doc_id": "py-4", "existing_version": 5,
                                                        "incoming_version": 4}]}}},
    ]
    platform_data = {"indexer": {"batch_size": 50, "locale": "fr"}, "source": "python"}
    if args.exact_numbers:
        # Python ints are exact and json.dumps writes them digit for digit; the schema allows them.
        batches[1]["details"]["conflict"]["version_conflict"][0].update(
            {"existing_version": 2**63 - 1, "incoming_version": 2**53 + 1, "sequence": 12345678901234567891})
        platform_data.update({"cursor": 12345678901234567891, "max_version": 2**63 - 1, "odd": 2**53 + 1,
                              "negative": -(2**63), "ratio": 1.0})
    total = sum(sum(b["counts"].values()) for b in batches)
    create_job(table, args.shop, job_id, created, total)
    s3.put_object(Bucket=args.bucket, Key=f"job-details/{job_id}/platform-data.json",
                  Body=json.dumps(platform_data).encode("utf-8"), ContentType="application/json",
                  Metadata={"shop-id": args.shop, "job-id": job_id})
    payloads = [flush(s3, table, args.bucket, args.shop, job_id, total, b, created + timedelta(minutes=10 * (i + 1))
                      if i < len(batches) - 1 else done, i == 0) for i, b in enumerate(batches)]
    merged = normalize({
        "chunk_ids": [c for p in payloads for c in p["chunk_ids"]],
        "failed": {r: ids for p in payloads for r, ids in p["failed"].items()},
        "skipped": {r: ids for p in payloads for r, ids in p["skipped"].items()},
        "conflict": {r: items for p in payloads for r, items in p["conflict"].items()},
    })
    print(json.dumps({"job_id": job_id, "completed_at": timestamp(done), "details": merged,
                      "platform_data": platform_data, "details_json": canonical_json(merged),
                      "platform_data_json": canonical_json(platform_data)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    vec = sub.add_parser("vectors")
    vec.add_argument("path")
    vec.add_argument("--table", required=True)
    job = sub.add_parser("job")
    for name in ("--table", "--bucket", "--shop", "--completed-at"):
        job.add_argument(name, required=True)
    job.add_argument("--exact-numbers", action="store_true")
    args = parser.parse_args()
    if args.cmd == "vectors":
        failures = check_vectors(args.path, args.table)
        for f in failures:
            print(f, file=sys.stderr)
        print(json.dumps({"ok": not failures, "failures": len(failures)}))
        sys.exit(1 if failures else 0)
    write_job(args)


if __name__ == "__main__":
    main()
