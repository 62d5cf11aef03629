import { withBoundedErrors } from '../../functions/bounded-errors';
import { capturingSink } from '../../infra/local/capture';
import { plannedJobsKey } from '../../shared/archive/format';
import { parseBatchEvent, parseGroupResult, parseTallyEvent } from '../../shared/archive/steps/events';
import { encodeCursor } from '../../shared/archive/steps/plan/cursor';
import { buildRun } from '../../shared/archive/steps/run-context';
import type {
  ArchiveStaged,
  BatchResult,
  GroupResult,
  PlannedGroup,
  RunTotals,
} from '../../shared/archive/steps/types';
import { TERMINAL_STATUSES } from '../../shared/jobs/schema';
import type { RequestCounts } from '../../shared/metrics';
import { BATCH_GROUPS_MAX } from '../../shared/settings';

/**
 * A state is capped at 256 KB. The page's items and results live in S3 (ItemReader, ResultWriter), so
 * the largest states are a batch's: its input (the run and its groups) and its output (a result per
 * group).
 * This builds both for the largest allowed batch with every id at its longest and every count and
 * sample at its largest, and requires < 200 KB. A field added to a slot shows up here.
 */
const LIMIT = 200 * 1024;
const N = BATCH_GROUPS_MAX;
const BIG = Number.MAX_SAFE_INTEGER;

// Every id at the longest its validator accepts.
const execution = 'e'.repeat(80);
const shopIdOf = (i: number) => `${'s'.repeat(120)}-${String(i).padStart(7, '0')}`; // 128
const PART = 'part-20260415T030000Z-k3jq2m7z.jsonl.gz';
const PAGE = 999_999;
const MONTH = '2026-03';

const run = buildRun({}, execution, '2026-04-15T03:00:00Z', {
  olderThanDays: 30,
  graceHours: 1,
  wholeMonths: false,
});

/** Request counts with every type a step sends. */
const requests: RequestCounts = {
  s3: BIG,
  dynamodb: BIG,
  byType: Object.fromEntries(
    [
      's3.GetObject',
      's3.PutObject',
      's3.HeadObject',
      's3.ListObjectsV2',
      's3.DeleteObjects',
      's3.DeleteObject',
      's3.CreateMultipartUpload',
      's3.UploadPart',
      's3.CompleteMultipartUpload',
      's3.AbortMultipartUpload',
      'dynamodb.BatchGetItem',
      'dynamodb.Query',
    ].map((t) => [t, BIG]),
  ),
};

const groups: PlannedGroup[] = Array.from({ length: N }, (_, i) => ({
  shopId: shopIdOf(i),
  month: MONTH,
  jobsKey: plannedJobsKey(run.runId, PAGE),
  jobsRange: [BIG, BIG],
  jobCount: 1_000_000,
}));
const batch = { page: PAGE, batch: BIG, groups };

const archive = (g: PlannedGroup): ArchiveStaged => ({
  partKey: `job-details-cold/${g.shopId}/${MONTH}/${PART}`,
  partName: PART,
  pendingKey: `job-details-index/${g.shopId}/${MONTH}/pending/${PART}.json`,
  summary: {
    archived: BIG,
    skipped: BIG,
    quarantinedCount: BIG,
    bytesIn: BIG,
    bytesOut: BIG,
    partName: PART,
    requests,
  },
});

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/** What a handler's bounded error leaves of a ~2 KB message (the batch steps truncate further). */
const handlerCause = async (): Promise<string> => {
  const failing = withBoundedErrors(capturingSink(), async () => {
    throw Object.assign(new Error(`AccessDenied: ${'x'.repeat(2000)}`), { name: 'AccessDenied' });
  });
  try {
    await failing({});
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a failure');
};

describe(`worst-case batch states at the largest batch (${N} groups)`, () => {
  it('the batch input: the run and the batch, every id at its longest', () => {
    const input = { run, batch };
    expect(parseBatchEvent(JSON.parse(JSON.stringify(input))).batch.groups).toHaveLength(N);
    expect(size(input)).toBeLessThan(LIMIT);
  });

  it('the batch output with every group failed with a bounded cause', async () => {
    const cause = (await handlerCause()).slice(0, 400);
    const out: BatchResult = {
      results: groups.map((g) => ({
        group: { shopId: g.shopId, month: MONTH },
        failed: true,
        error: 'AccessDenied',
        cause,
      })),
      overhead: requests,
    };
    expect(size(out)).toBeLessThan(LIMIT);
  });

  it('the batch output (what the ResultWriter keeps of a child): counts only, the requests once in its overhead', () => {
    const results: GroupResult[] = groups.map((g) => {
      const { requests: _sent, ...counts } = archive(g).summary;
      return {
        group: { shopId: g.shopId, month: MONTH },
        archive: counts,
        delete: {
          objectsDeleted: BIG,
          objectsKept: BIG,
          deleteErrorCount: BIG,
          jobsCompleted: BIG,
          jobsWaiting: BIG,
          deletedEarlier: { jobs: BIG, parts: BIG },
        },
      };
    });
    const out: BatchResult = { results, overhead: requests };
    results.forEach((r, i) => {
      parseGroupResult(JSON.parse(JSON.stringify(r)), `results[${i}]`);
    });
    expect(JSON.stringify(out)).not.toContain('jobsKey');
    expect(JSON.stringify(results)).not.toContain('requests');
    expect(size(out)).toBeLessThan(LIMIT);
  });

  it('the Tally event: the page state and where the results are, whatever the page size', () => {
    const totals: RunTotals = {
      jobsPlanned: BIG,
      jobsArchived: BIG,
      jobsSkipped: BIG,
      jobsQuarantined: BIG,
      partsWritten: BIG,
      bytesIn: BIG,
      bytesOut: BIG,
      objectsDeleted: BIG,
      objectsKept: BIG,
      deleteErrors: BIG,
      jobsDeleted: BIG,
      groupsOk: BIG,
      groupsFailed: BIG,
      requests,
    };
    // The cursor holds a raw GSI key, which may be a quarantined row's: DynamoDB's key size limits.
    const event = {
      run,
      page: PAGE,
      cursor: encodeCursor({
        statusIndex: TERMINAL_STATUSES.length - 1,
        startKey: {
          pk: 'p'.repeat(2048),
          sk: 's'.repeat(1024),
          job_status: TERMINAL_STATUSES[TERMINAL_STATUSES.length - 1] as string,
          status_created_at: 'c'.repeat(1024),
        },
      }),
      totals,
      batches: BIG,
      groups: BIG,
      batchesKey: `job-details-runs/${run.runId}/plan/${PAGE}/batches.jsonl`,
      resultsPrefix: `job-details-runs/${run.runId}/results/${PAGE}`,
      planQuarantined: BIG,
      mapRun: {
        MapRunArn: `arn:aws:states:us-east-1:123456789012:mapRun:${'m'.repeat(80)}/ProcessBatches:${'u'.repeat(36)}`,
        ResultWriterDetails: {
          Bucket: 'b'.repeat(63),
          Key: `job-details-runs/${run.runId}/results/${PAGE}/${'u'.repeat(36)}/manifest.json`,
        },
      },
    };
    expect(parseTallyEvent(JSON.parse(JSON.stringify(event))).groups).toBe(BIG);
    expect(size(event)).toBeLessThan(16 * 1024);
  });
});
