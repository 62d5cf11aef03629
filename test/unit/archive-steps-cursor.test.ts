import { decodeCursor, encodeCursor, type PlanCursor } from '../../shared/archive/steps/plan/cursor';
import { InvalidInputError } from '../../shared/errors';

const key = {
  pk: 'SHOP#s',
  sk: 'JOB#j',
  job_status: 'FAILED',
  status_created_at: '2026-01-01T00:00:00.000Z',
};

describe('plan cursor', () => {
  test.each<PlanCursor>([
    { statusIndex: 0, startKey: null },
    { statusIndex: 1, startKey: key },
    { statusIndex: 2, startKey: { ...key, job_status: 'CONFLICT' } },
  ])('round-trips %j through an opaque base64url string', (c) => {
    const s = encodeCursor(c);
    expect(s).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(s)).toEqual(c);
  });

  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  test.each([
    ['not base64url', 'abc$%'],
    ['not JSON', Buffer.from('{nope').toString('base64url')],
    ['a status out of range', enc({ s: 3, k: null })],
    ['a fractional status', enc({ s: 0.5, k: null })],
    ['a start key missing sk', enc({ s: 1, k: { pk: 'a', job_status: 'FAILED', status_created_at: 't' } })],
    ['a start key with extra fields', enc({ s: 1, k: { ...key, x: 1 } })],
    ['a start key of another status', enc({ s: 0, k: key })],
    ['an array', enc([1])],
  ])('rejects %s with InvalidInputError naming the field', (_what, cursor) => {
    expect(() => decodeCursor(cursor, 'state.cursor')).toThrow(InvalidInputError);
    expect(() => decodeCursor(cursor, 'state.cursor')).toThrow(/state\.cursor/);
  });
});
