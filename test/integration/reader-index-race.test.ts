import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  gzipMemberLength,
  INDEX_FIRST_READ_BYTES,
  type IndexedJob,
  type MonthIndex,
  monthIndexKey,
  parseIndexHeader,
  parseMonthIndex,
  serializeMonthIndex,
  shopIndexPrefix,
} from '../../shared/archive/format';
import { parseJsonExact } from '../../shared/details/json';
import { JobDetailsReader } from '../../shared/reader';
import { freshBucket, testS3 } from '../support/local';
import { expectedLookup, lookupJson } from '../support/vector-scenario';

/**
 * A month index larger than the first read is read in two GETs (its first 64 KB, then the job's
 * entry block) of one version: the later read carries If-Match with the first read's ETag. A
 * concurrent archival may rewrite the index, or reindex/retention remove it, between the two: the
 * reader then reads the month again (a 412 or a 404 on the later read), at most INDEX_READ_ATTEMPTS
 * times, then ConcurrentModificationError names the index. On the local stack (s3rver with our
 * conditional GET, tested in local-stack.test.ts); the race is put between the two GETs by a
 * middleware on the reader's client that rewrites the index right after its first read.
 */
const DIR = resolve(__dirname, '../../docs/vectors');
interface Expected {
  objects: Array<{ key: string; content_encoding?: string; metadata?: Record<string, string> }>;
  lookups: Array<Record<string, unknown> & { case: string; shop_id: string; job_id: string }>;
}
const expected = parseJsonExact(readFileSync(join(DIR, 'expected.json'), 'utf8'), 'vectors') as Expected;
const want = expected.lookups.find((l) => l.case.startsWith('own parts, retried'));
if (!want) throw new Error('the vectors have no retried own-part job');
const archivals = want.archivals as Array<{ month: string }>;
const KEY = monthIndexKey(want.shop_id, archivals[archivals.length - 1]?.month ?? '');

const writer = testS3();
afterAll(() => writer.destroy());

const load = async (): Promise<string> => {
  const bucket = await freshBucket();
  for (const o of expected.objects) {
    await writer.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: o.key,
        Body: readFileSync(join(DIR, 'bucket', o.key)),
        ...(o.content_encoding ? { ContentEncoding: o.content_encoding } : {}),
        ...(o.metadata ? { Metadata: o.metadata } : {}),
      }),
    );
  }
  return bucket;
};

/**
 * The vectors' month index with 8,000 more jobs whose ids sort before the retried job's (entries like
 * its own, in the same part), written by the archiver's own serializeMonthIndex: the job's entry
 * block lies past the first read. `seed` picks the ids, so each version's offsets differ.
 */
const bigIndex = (original: MonthIndex, seed: number): Buffer => {
  const jobs: Record<string, readonly IndexedJob[]> = { ...original.jobs };
  const template = jobs[want.job_id] ?? [];
  let x = seed;
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  while (Object.keys(jobs).length < 8001) {
    let id = '';
    for (let i = 0; i < 13; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      id += alphabet[x % alphabet.length];
    }
    if (id < want.job_id) jobs[id] = template;
  }
  const bytes = serializeMonthIndex({ ...original, jobs });
  const { blocks } = parseIndexHeader(bytes.subarray(0, headerLength(bytes)), KEY);
  const last = blocks[blocks.length - 1];
  // Precondition: the job's entry block (the last) lies past the first read — a second GET.
  expect(last && headerLength(bytes) + last.offset).toBeGreaterThan(INDEX_FIRST_READ_BYTES);
  return bytes;
};
/** The header member's length: the index's first gzip member. */
const headerLength = (bytes: Buffer): number => {
  const m = gzipMemberLength(bytes);
  if (!('length' in m)) throw new Error('the index does not start with a whole gzip member');
  return m.length;
};

/** A reader whose every GET is counted, and `after` runs right after each first read of the index. */
const racedReader = (bucket: string, after: () => Promise<void>) => {
  const s3: S3Client = testS3();
  const gets: Array<{ range?: string; ifMatch?: string }> = [];
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; Range?: string; IfMatch?: string };
      const ofIndex = context.commandName === 'GetObjectCommand' && input.Key === KEY;
      if (ofIndex) gets.push({ range: input.Range, ifMatch: input.IfMatch });
      const out = await next(args);
      if (ofIndex && input.Range === `bytes=0-${INDEX_FIRST_READ_BYTES - 1}`) await after();
      return out;
    },
    { step: 'initialize', name: 'raceAfterFirstIndexRead' },
  );
  return { reader: new JobDetailsReader(s3, bucket), gets, s3 };
};

const lookup = (reader: JobDetailsReader) => reader.lookup({ shopId: want.shop_id, jobId: want.job_id });
const answer = (got: Awaited<ReturnType<typeof lookup>>) =>
  lookupJson(expectedLookup({ shopId: want.shop_id, jobId: want.job_id, case: want.case }, got));
const { case: _case, ...wanted } = want;

const outcome = (p: Promise<unknown>) =>
  p.then(
    (v) => ({ value: v }),
    (err: Error) => ({ error: err.name, message: err.message }),
  );

describe('a month index rewritten or removed between its two reads', () => {
  let bucket: string;
  let original: MonthIndex;
  beforeEach(async () => {
    bucket = await load();
    original = parseMonthIndex(readFileSync(join(DIR, 'bucket', KEY)), KEY);
    await writer.send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: bigIndex(original, 1) }));
  });

  test('undisturbed: two GETs of the index, the second conditional on the first one’s version', async () => {
    const { reader, gets, s3 } = racedReader(bucket, async () => undefined);
    expect(answer(await lookup(reader))).toBe(lookupJson(wanted));
    expect(gets.map((g) => Boolean(g.ifMatch))).toEqual([false, true]);
    s3.destroy();
  });

  test('rewritten once: the month is read again from the new version, and answers as the vectors', async () => {
    const versions = [bigIndex(original, 2)];
    const { reader, gets, s3 } = racedReader(bucket, async () => {
      const next = versions.shift();
      if (next) await writer.send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: next }));
    });
    expect(answer(await lookup(reader))).toBe(lookupJson(wanted));
    // first read, the refused block read (412), then both again on the new version.
    expect(gets.map((g) => Boolean(g.ifMatch))).toEqual([false, true, false, true]);
    s3.destroy();
  });

  test('rewritten at every read: after 3 attempts ConcurrentModificationError names the index', async () => {
    let seed = 10;
    const { reader, gets, s3 } = racedReader(bucket, async () => {
      seed += 1;
      await writer.send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: bigIndex(original, seed) }));
    });
    const got = await outcome(lookup(reader));
    expect(got).toEqual({ error: 'ConcurrentModificationError', message: expect.stringContaining(KEY) });
    expect(gets).toHaveLength(6);
    s3.destroy();
  });

  test('removed between the reads: the same outcome as a month whose index was never there', async () => {
    const { reader, s3 } = racedReader(bucket, async () => {
      await writer.send(new DeleteObjectCommand({ Bucket: bucket, Key: KEY }));
    });
    const racedLookup = await lookup(reader);
    const absentLookup = await lookup(new JobDetailsReader(writer, bucket));
    expect(answer(racedLookup)).toEqual(answer(absentLookup));
    expect(answer(racedLookup)).not.toEqual(lookupJson(wanted));
    // …and both name the month's committed parts in their warnings (never "not archived").
    const lost = expect.stringMatching(/index\.json: month index is missing while 3 committed part\(s\)/);
    expect(racedLookup.provenance.warnings).toEqual([lost]);
    expect(absentLookup.provenance.warnings).toEqual([lost]);
    s3.destroy();
  });
});

describe("a month index removed between the search's listing and its read", () => {
  // The search lists the shop's month indexes, then reads each: one removed in between (its committed
  // parts still there) must be named as a month listed without one is — never searched as empty.
  test('the same result as a month whose index was already gone: its committed parts named in a warning', async () => {
    const bucket = await load();
    const docId = 'rocbqeko6wjam-r';
    const s3: S3Client = testS3();
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const input = args.input as { Prefix?: string };
        if (context.commandName === 'ListObjectsV2Command' && input.Prefix === shopIndexPrefix(want.shop_id))
          await writer.send(new DeleteObjectCommand({ Bucket: bucket, Key: KEY }));
        return out;
      },
      { step: 'initialize', name: 'removeIndexAfterListing' },
    );
    const search = (r: JobDetailsReader) =>
      r.findDocument({ shopId: want.shop_id, docId }).then((got) => ({
        jobs: got.jobs.map((j) => j.jobId),
        warnings: got.provenance.warnings,
      }));
    const raced = await search(new JobDetailsReader(s3, bucket));
    const absent = await search(new JobDetailsReader(writer, bucket));
    expect(absent.warnings).toEqual([expect.stringContaining('committed part(s)')]);
    expect(raced.jobs).toEqual(absent.jobs);
    expect(raced.warnings).toEqual([expect.stringContaining(KEY)]);
    expect(raced.warnings).toEqual([expect.stringContaining('committed part(s)')]);
    s3.destroy();
  });
});

describe('search: a month index whose parts list is longer than the first read, rewritten between its reads', () => {
  // The header member alone outgrows the first read (thousands of parts): search reads the whole
  // index conditional on the first read's ETag, and on 412 reads the month again (doc-candidates.ts).
  const docId = 'rocbqeko6wjam-r';
  const manyParts = (original: MonthIndex, seed: number): Buffer => {
    let x = seed;
    const hex = (n: number) => {
      let out = '';
      for (let i = 0; i < n; i++) {
        x = (x * 1103515245 + 12345) % 2147483648;
        out += ((x >>> 16) % 16).toString(16);
      }
      return out;
    };
    const template = original.parts[original.parts.length - 1];
    if (!template) throw new Error('the vectors month has no part');
    const { filters: _f, ...noFilters } = template;
    const extra = Array.from({ length: 4000 }, () => {
      const name = `part-20261129T052828Z-${hex(8)}.jsonl.gz`;
      return { ...noFilters, name, key: template.key.replace(template.name, name), etag: hex(32) };
    });
    const bytes = serializeMonthIndex({ ...original, parts: [...original.parts, ...extra] });
    // Precondition: the header member does not fit the first read.
    expect('length' in gzipMemberLength(bytes.subarray(0, INDEX_FIRST_READ_BYTES))).toBe(false);
    return bytes;
  };
  let bucket: string;
  let original: MonthIndex;
  beforeEach(async () => {
    bucket = await load();
    original = parseMonthIndex(readFileSync(join(DIR, 'bucket', KEY)), KEY);
    await writer.send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: manyParts(original, 1) }));
  });
  const search = (r: JobDetailsReader) =>
    r.findDocument({ shopId: want.shop_id, docId }).then((got) => ({
      jobs: got.jobs.map((j) => `${j.jobId} ${j.partKey}`),
      warnings: got.provenance.warnings,
    }));

  test('rewritten once: the month is read again and answers as undisturbed', async () => {
    const undisturbed = await search(new JobDetailsReader(writer, bucket));
    expect(undisturbed.jobs).toHaveLength(2);
    const versions = [manyParts(original, 2)];
    const { reader, gets, s3 } = racedReader(bucket, async () => {
      const next = versions.shift();
      if (next) await writer.send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: next }));
    });
    expect(await search(reader)).toEqual(undisturbed);
    expect(gets.map((g) => Boolean(g.ifMatch))).toEqual([false, true, false, true]);
    s3.destroy();
  });

  test('rewritten at every read: ConcurrentModificationError names the index after 3 attempts', async () => {
    let seed = 10;
    const { reader, gets, s3 } = racedReader(bucket, async () => {
      seed += 1;
      await writer.send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: manyParts(original, seed) }));
    });
    const got = await outcome(search(reader));
    expect(got).toEqual({ error: 'ConcurrentModificationError', message: expect.stringContaining(KEY) });
    expect(gets).toHaveLength(6);
    s3.destroy();
  });
});
