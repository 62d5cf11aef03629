import { App, Duration, Size, Stack, Token } from 'aws-cdk-lib';
import { Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { ArchiveStorageClass, type JobDetailsArchiveProps } from '../../infra/construct/props';
import { resolveArchiveProps } from '../../infra/construct/props-validation';
import { ARCHIVER_STEPS } from '../../infra/construct/step-names';
import { InvalidInputError, TtlTooShortError } from '../../shared/errors';
import { ACCESS_LOGS_RETENTION_DAYS } from '../../shared/settings';
import { useOutdirs } from './template-helpers';

/** Props are checked in the constructor, before any resource exists; no synthesis needed. */
const outdir = useOutdirs()();

const build = (props: JobDetailsArchiveProps) => {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir }), 'S');
  let error: unknown;
  try {
    new JobDetailsArchive(stack, 'Archive', props);
  } catch (err) {
    error = err;
  }
  return { stack, error };
};

const expectInvalid = (props: JobDetailsArchiveProps, field: string, reason: RegExp) => {
  const { stack, error } = build(props);
  expect(error).toBeInstanceOf(InvalidInputError);
  expect((error as InvalidInputError).field).toBe(field);
  expect((error as InvalidInputError).message).toMatch(reason);
  // Nothing was created before the check.
  expect(stack.node.tryFindChild('Archive')?.node.children ?? []).toHaveLength(0);
};

describe('JobDetailsArchive props: defaults', () => {
  it('fill in every documented default', () => {
    const p = resolveArchiveProps({});
    expect(p).toMatchObject({
      olderThanDays: 30,
      graceHours: 0,
      jobTtlDays: 90,
      archiveStorageClass: 'GLACIER_IR',
      transitionAfterDays: 1,
      // GLACIER_IR kept forever (priced over 10 years): where a move pays for itself.
      transitionMinimumBytes: 30_578,
      maxConcurrency: 10,
      planPageGroups: 10_000,
      batchGroups: 300,
      batchJobs: 5000,
      wholeMonths: true,
      schedule: { expression: 'cron(0 3 * * ? *)', timeZone: 'UTC', enabled: true },
    });
    expect(p.executionTimeout.toHours()).toBe(12);
    expect(p.memoryMb).toEqual({
      plan: 512,
      'archive-batch': 512,
      tally: 512,
      report: 512,
      forget: 1024,
      redact: 1024,
    });
    expect(p.timeout['archive-batch'].toMinutes()).toBe(15);
    expect(p.timeout.plan.toMinutes()).toBe(5);
    // No access logs (ACCESS_LOGS_RETENTION_DAYS, 0: what the cost model prices by default too).
    expect(ACCESS_LOGS_RETENTION_DAYS).toBe(0);
    expect(p.accessLogs).toBeNull();
  });

  it('opt in to access logs with accessLogsRetention (a log bucket of the construct’s own) or serverAccessLogsBucket', () => {
    expect(resolveArchiveProps({ accessLogsRetention: Duration.days(30) }).accessLogs).toEqual({
      prefix: 'details-bucket/',
      retentionDays: 30,
    });
    const { stack } = build({});
    const central = Bucket.fromBucketName(stack, 'Central', 'org-s3-access-logs');
    expect(
      resolveArchiveProps({ serverAccessLogsBucket: central, serverAccessLogsPrefix: 'jda/' }).accessLogs,
    ).toEqual({ prefix: 'jda/', bucket: central });
  });

  it('take one value for all steps, and single steps over it or over the defaults', () => {
    expect(Object.values(resolveArchiveProps({ lambdaMemoryMb: 2048 }).memoryMb)).toEqual(
      Array(ARCHIVER_STEPS.length).fill(2048),
    );
    const p = resolveArchiveProps({
      stepMemoryMb: { tally: 256 },
      stepTimeout: { plan: Duration.minutes(2) },
    });
    expect(p.memoryMb.tally).toBe(256);
    expect(p.memoryMb['archive-batch']).toBe(512);
    expect(p.timeout.plan.toMinutes()).toBe(2);
    expect(p.timeout.report.toMinutes()).toBe(5);
    const both = resolveArchiveProps({ lambdaMemoryMb: 2048, stepMemoryMb: { archiveBatch: 3008 } });
    expect(both.memoryMb).toEqual({
      plan: 2048,
      'archive-batch': 3008,
      tally: 2048,
      report: 2048,
      forget: 2048,
      redact: 2048,
    });
  });

  it('accept graceHours 0, day-0 transitions, and a rate() schedule', () => {
    const p = resolveArchiveProps({
      graceHours: 0,
      transitionAfterDays: 0,
      archiveStorageClass: ArchiveStorageClass.DEEP_ARCHIVE,
      schedule: { expression: 'rate(12 hours)', timeZone: 'Europe/Berlin', enabled: false },
    });
    expect(p.graceHours).toBe(0);
    expect(p.transitionAfterDays).toBe(0);
    expect(p.schedule).toEqual({ expression: 'rate(12 hours)', timeZone: 'Europe/Berlin', enabled: false });
  });
});

describe('JobDetailsArchive props: fails when', () => {
  it('olderThanDays is negative or not a number', () => {
    expectInvalid({ olderThanDays: -1 }, 'olderThanDays', /\[0, 3650\]/);
    expectInvalid({ olderThanDays: Number.NaN }, 'olderThanDays', /expected a number/);
  });

  it('graceHours is negative', () => {
    expectInvalid({ graceHours: -0.5 }, 'graceHours', /\[0, 8760\]/);
  });

  it('jobTtlDays would let rows expire before their whole month is archived', () => {
    // Whole months (default): a job completed on the 1st waits for its month to be older than
    // olderThanDays — up to 31 days more — then the grace hours and a 2-day margin.
    const expectTooShort = (props: JobDetailsArchiveProps, needed: number) => {
      const { stack, error } = build(props);
      expect(error).toBeInstanceOf(TtlTooShortError);
      expect(error).toMatchObject({ name: 'TtlTooShortError', field: 'jobTtlDays', neededDays: needed });
      expect((error as Error).message).toMatch(/rows must outlive archival so the plan can still find them/);
      expect(stack.node.tryFindChild('Archive')?.node.children ?? []).toHaveLength(0);
      return error as TtlTooShortError;
    };
    const err = expectTooShort({ olderThanDays: 14, graceHours: 24, jobTtlDays: 48 }, 14 + 31 + 1 + 2);
    expect(err.terms).toEqual({ olderThanDays: 14, 'a whole month': 31, 'graceHours/24': 1, margin: 2 });
    expect(err.message).toMatch(
      /olderThanDays 14 \+ a whole month 31 \+ graceHours\/24 1 \+ margin 2 = 48 days/,
    );
    // The case: a TTL of 33–61 days passed the old olderThanDays + 2 check.
    expectTooShort({ olderThanDays: 30, graceHours: 0, jobTtlDays: 61 }, 63);
    expect(() => resolveArchiveProps({ olderThanDays: 14, graceHours: 24, jobTtlDays: 48.5 })).not.toThrow();
    expect(() => resolveArchiveProps({ olderThanDays: 30, graceHours: 1, jobTtlDays: 90 })).not.toThrow();
    // Without whole months the cut-off is a rolling day: no month to wait for.
    expectTooShort({ olderThanDays: 60, graceHours: 24, jobTtlDays: 63, wholeMonths: false }, 63);
    expect(() =>
      resolveArchiveProps({ olderThanDays: 60, graceHours: 24, jobTtlDays: 63.5, wholeMonths: false }),
    ).not.toThrow();
  });

  it('archiveStorageClass is not a Glacier class', () => {
    expectInvalid(
      { archiveStorageClass: 'STANDARD_IA' as never },
      'archiveStorageClass',
      /GLACIER_IR, GLACIER, DEEP_ARCHIVE/,
    );
  });

  it('transitionAfterDays is negative or fractional', () => {
    expectInvalid({ transitionAfterDays: -1 }, 'transitionAfterDays', /\[0, 3650\]/);
    expectInvalid({ transitionAfterDays: 1.5 }, 'transitionAfterDays', /whole number/);
  });

  it('transitionMinimumSize is no Size, a token, fractional bytes, or over S3’s 5 TiB', () => {
    expectInvalid({ transitionMinimumSize: 65536 as never }, 'transitionMinimumSize', /expected a Size/);
    expectInvalid(
      { transitionMinimumSize: Size.kibibytes(Token.asNumber({ Ref: 'Kb' })) },
      'transitionMinimumSize',
      /concrete Size/,
    );
    expectInvalid({ transitionMinimumSize: Size.bytes(0.5) }, 'transitionMinimumSize', /whole bytes/);
    expectInvalid(
      { transitionMinimumSize: Size.tebibytes(6) },
      'transitionMinimumSize',
      /0 to 5497558138880/,
    );
    // The bounds themselves are S3's.
    expect(resolveArchiveProps({ transitionMinimumSize: Size.bytes(0) }).transitionMinimumBytes).toBe(0);
    expect(resolveArchiveProps({ transitionMinimumSize: Size.tebibytes(5) }).transitionMinimumBytes).toBe(
      5 * 1024 ** 4,
    );
  });

  it('lambdaMemoryMb / stepMemoryMb is out of Lambda range, or names an unknown step', () => {
    expectInvalid({ lambdaMemoryMb: 64 }, 'lambdaMemoryMb', /\[128, 10240\]/);
    expectInvalid({ stepMemoryMb: { archiveBatch: 20000 } }, 'stepMemoryMb.archiveBatch', /\[128, 10240\]/);
    expectInvalid({ stepMemoryMb: { plann: 512 } as never }, 'stepMemoryMb', /unknown step "plann"/);
    // The kebab-case step name (the functions' ids) is not a key: the message names the keys.
    expectInvalid(
      { stepMemoryMb: { 'archive-batch': 512 } as never },
      'stepMemoryMb',
      /steps are plan, archiveBatch, tally, report, forget, redact/,
    );
    // The record form of the old union is refused with the prop named, not silently taken.
    expectInvalid({ lambdaMemoryMb: { tally: 256 } as never }, 'lambdaMemoryMb', /expected a number/);
  });

  it('lambdaTimeout exceeds 15 minutes', () => {
    expectInvalid(
      { lambdaTimeout: Duration.minutes(16) },
      'lambdaTimeout',
      /between 1 second and 15 minutes/,
    );
    expectInvalid({ stepTimeout: { report: Duration.hours(1) } }, 'stepTimeout.report', /15 minutes/);
  });

  it('maxConcurrency is 0 or fractional', () => {
    expectInvalid({ maxConcurrency: 0 }, 'maxConcurrency', /\[1, 10000\]/);
    expectInvalid({ maxConcurrency: 2.5 }, 'maxConcurrency', /whole number/);
  });

  it('executionTimeout is shorter than a minute or outlives the run scratch (expired after 3 days)', () => {
    expectInvalid(
      { executionTimeout: Duration.seconds(10) },
      'executionTimeout',
      /between 1 minute and 2 days/,
    );
    expectInvalid({ executionTimeout: Duration.days(3) }, 'executionTimeout', /2 days/);
    expectInvalid({ executionTimeout: Duration.hours(49) }, 'executionTimeout', /2 days/);
    expect(resolveArchiveProps({ executionTimeout: Duration.days(2) }).executionTimeout.toDays()).toBe(2);
  });

  it('planPageGroups, batchGroups (the state-size bound: BATCH_GROUPS_MAX) or batchJobs is out of range', () => {
    expectInvalid({ planPageGroups: 0 }, 'planPageGroups', /\[1, 100000\]/);
    expectInvalid({ planPageGroups: 100_001 }, 'planPageGroups', /\[1, 100000\]/);
    expect(resolveArchiveProps({ planPageGroups: 100 }).planPageGroups).toBe(100);
    expectInvalid({ batchGroups: 301 }, 'batchGroups', /\[1, 300\]/);
    expect(resolveArchiveProps({ batchGroups: 300 }).batchGroups).toBe(300);
    expectInvalid({ batchJobs: 0 }, 'batchJobs', /\[1, 1000000\]/);
    expectInvalid({ wholeMonths: 'yes' as unknown as boolean }, 'wholeMonths', /boolean/);
    expect(resolveArchiveProps({ batchGroups: 10, batchJobs: 500, wholeMonths: false })).toMatchObject({
      batchGroups: 10,
      batchJobs: 500,
      wholeMonths: false,
    });
  });

  it('schedule.expression is not a recurring EventBridge Scheduler expression', () => {
    expectInvalid(
      { schedule: { expression: 'daily' } },
      'schedule.expression',
      /cron\(\.\.\.\) or rate\(\.\.\.\)/,
    );
    expectInvalid({ schedule: { expression: 'at(2030-01-01T00:00:00)' } }, 'schedule.expression', /cron/);
    expectInvalid({ schedule: { expression: 'cron(0 3 * * *)' } }, 'schedule.expression', /6 fields/);
    expectInvalid(
      { schedule: { expression: 'cron(0 3 * * * *)' } },
      'schedule.expression',
      /'\?' in exactly one/,
    );
    expectInvalid({ schedule: { expression: 'rate(1 hours)' } }, 'schedule.expression', /singular for 1/);
    expectInvalid({ schedule: { expression: 'rate(0 minutes)' } }, 'schedule.expression', /at least 1/);
  });

  it('schedule.timeZone is not an IANA zone', () => {
    expectInvalid(
      { schedule: { timeZone: 'Mars/Olympus_Mons' } },
      'schedule.timeZone',
      /unknown IANA time zone/,
    );
  });

  it('schedule.enabled is not a boolean', () => {
    expectInvalid({ schedule: { enabled: 'no' as never } }, 'schedule.enabled', /boolean/);
  });

  it('accessLogsRetention is not whole days in [1 day, 3650 days]', () => {
    expectInvalid({ accessLogsRetention: Duration.hours(36) }, 'accessLogsRetention', /whole days/);
    expectInvalid({ accessLogsRetention: Duration.hours(12) }, 'accessLogsRetention', /between 1 day/);
    expectInvalid({ accessLogsRetention: Duration.days(3651) }, 'accessLogsRetention', /3650 days/);
  });

  it('accessLogsRetention comes with serverAccessLogsBucket (that bucket’s lifecycle keeps the logs)', () => {
    const { stack } = build({});
    const central = Bucket.fromBucketName(stack, 'Central', 'org-s3-access-logs');
    expectInvalid(
      { accessLogsRetention: Duration.days(30), serverAccessLogsBucket: central },
      'accessLogsRetention',
      /with serverAccessLogsBucket no log bucket is created.*give one of accessLogsRetention and serverAccessLogsBucket/,
    );
  });

  it('an access-log prop comes with bucket (the given bucket keeps its own logging)', () => {
    const { stack } = build({});
    const details = Bucket.fromBucketName(stack, 'Details', 'prod-job-details');
    expectInvalid(
      { bucket: details, accessLogsRetention: Duration.days(30) },
      'accessLogsRetention',
      /details bucket this construct creates; with `bucket` your bucket keeps its own logging/,
    );
    expectInvalid(
      { bucket: details, serverAccessLogsBucket: Bucket.fromBucketName(stack, 'Logs', 'logs') },
      'serverAccessLogsBucket',
      /with `bucket` your bucket keeps its own logging/,
    );
    expectInvalid({ bucket: details, serverAccessLogsPrefix: 'x/' }, 'serverAccessLogsPrefix', /`bucket`/);
  });

  it('serverAccessLogsPrefix comes alone (access logs are off unless asked for)', () => {
    expectInvalid(
      { serverAccessLogsPrefix: 'job-details-archive/' },
      'serverAccessLogsPrefix',
      /writes none by default: give accessLogsRetention .* or serverAccessLogsBucket/,
    );
  });

  it('serverAccessLogsBucket is KMS-encrypted, or serverAccessLogsPrefix is not a key prefix', () => {
    const { stack } = build({});
    const kms = new Bucket(stack, 'Kms', { encryption: BucketEncryption.KMS });
    expectInvalid({ serverAccessLogsBucket: kms }, 'serverAccessLogsBucket', /KMS key.*SSE-S3/);
    expectInvalid({ serverAccessLogsPrefix: '/logs/' }, 'serverAccessLogsPrefix', /not starting with '\/'/);
    expectInvalid({ serverAccessLogsPrefix: 'x'.repeat(1025) }, 'serverAccessLogsPrefix', /1024/);
    // The grant covers `{prefix}*`: 'logs' would cover 'logs-other/' too.
    expectInvalid(
      { serverAccessLogsPrefix: 'logs' },
      'serverAccessLogsPrefix',
      /ending in '\/'.*"logs-other\/"/,
    );
  });
});
