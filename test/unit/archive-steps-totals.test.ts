import { addResults, condenseCause, failuresOf } from '../../shared/archive/steps/report/totals';
import { zeroTotals } from '../../shared/archive/steps/run-totals';
import type { GroupResult } from '../../shared/archive/steps/types';

const group = (shopId: string) => ({ shopId, month: '2026-01' });
const done = (shopId: string, partName: string | null): GroupResult => ({
  group: group(shopId),
  archive: {
    archived: 2,
    skipped: 0,
    quarantinedCount: 1,
    bytesIn: 100,
    bytesOut: 40,
    partName,
  },
  delete: {
    objectsDeleted: 5,
    objectsKept: 1,
    deleteErrorCount: 2,
    jobsCompleted: 2,
  },
});
const failed: GroupResult = {
  group: group('f'),
  failed: true,
  error: 'VerificationError',
  cause: JSON.stringify({
    errorType: 'VerificationError',
    errorMessage: 'verification of k failed: x',
    trace: ['a', 'b'],
  }),
};

test('addResults sums successful groups and counts failed ones; requests come from the batches’ overhead, not the results', () => {
  const t = addResults({ ...zeroTotals(), jobsPlanned: 9, requests: { s3: 1, dynamodb: 3 } }, [
    done('a', 'p1'),
    done('b', null),
    failed,
  ]);
  expect(t).toMatchObject({
    jobsPlanned: 9,
    jobsArchived: 4,
    jobsQuarantined: 2,
    partsWritten: 1,
    bytesIn: 200,
    bytesOut: 80,
    objectsDeleted: 10,
    objectsKept: 2,
    deleteErrors: 4,
    jobsDeleted: 4,
    groupsOk: 2,
    groupsFailed: 1,
    requests: { s3: 1, dynamodb: 3 },
  });
});

test('failures carry their group and the error message, not the stack', () => {
  expect(failuresOf([done('a', 'p'), failed])).toEqual([
    { shopId: 'f', month: '2026-01', error: 'VerificationError', cause: 'verification of k failed: x' },
  ]);
});

test('condenseCause keeps plain text, shortened', () => {
  expect(condenseCause('States.Timeout')).toBe('States.Timeout');
  expect(condenseCause('x'.repeat(1000)).length).toBeLessThanOrEqual(400);
});
