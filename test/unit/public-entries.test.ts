import * as cdk from '../../infra/construct';
import * as reader from '../../shared/entry/reader';
import * as writer from '../../shared/entry/writer';

/**
 * The package's curated entry points (what `exports` will name): each exports what a consumer needs —
 * the writer what an indexer writes with, the reader what a service reads with, the construct what a
 * CDK app deploys — and none of the archiver's or the local tools' helpers.
 */
const runtimeNames = (m: object): string[] => Object.keys(m).sort();

test('writer: the store, the flush protocol, ids, the table description, the errors', () => {
  const names = runtimeNames(writer);
  expect(names).toEqual(
    expect.arrayContaining([
      'JobDetailsStore',
      'getJobDetailsStore',
      'flushIdForChunks',
      'createJob',
      'recordFlush',
      'writeTerminal',
      'generateJobId',
      'chunkIds',
      'JOBS_TABLE',
      'JobArchiveError',
      'InvalidInputError',
    ]),
  );
  expect(names.filter((n) => /archive|Index|Part|Local|reader/i.test(n) && !/Error$/.test(n))).toEqual([]);
});

test('reader: JobDetailsReader and the errors a read can throw, nothing else', () => {
  expect(runtimeNames(reader)).toEqual([
    'ArchiveNotRestoredError',
    'CorruptObjectError',
    'InvalidInputError',
    'JobArchiveError',
    'JobDetailsReader',
    'UnsupportedRuntimeError',
  ]);
});

test('cdk: the construct, its standalone stack, the lifecycle rules for an imported bucket (cdk-nag is its own entry)', () => {
  expect(runtimeNames(cdk)).toEqual([
    'ArchiveSql',
    'ArchiveStack',
    'ArchiveStorageClass',
    'JobDetailsArchive',
    'RestoreTier',
    'detailsLifecycleRules',
    'noncurrentVersionRules',
    'retentionRules',
  ]);
});
