import type { S3Client } from '@aws-sdk/client-s3';
import {
  createJobDetailsStoreProvider,
  getJobDetailsStore,
  type JobDetailsPayload,
  JobDetailsStore,
  resetJobDetailsStore,
} from '../../shared/details';
import { InvalidIdError, InvalidInputError, JobArchiveError } from '../../shared/errors';

/** A client that must never be used: every send throws, and calls are counted. */
const noIoClient = () => {
  const send = jest.fn(async () => {
    throw new Error('no S3 request expected');
  });
  return { client: { send } as unknown as S3Client, send };
};

const PAYLOAD: JobDetailsPayload = { chunk_ids: ['p0'], failed: { r: ['d1'] }, skipped: {}, conflict: {} };
const BAD_IDS: [string, string][] = [
  ['parent dir', '../x'],
  ['slash', 'a/b'],
  ['empty', ''],
  ['control char', 'a\u0007b'],
  ['over-long', 'x'.repeat(200)],
];

describe('JobDetailsStore input checks (no I/O on bad input)', () => {
  it.each(BAD_IDS)('%s id → InvalidIdError from every method, zero S3 calls', async (_case, bad) => {
    const { client, send } = noIoClient();
    const store = new JobDetailsStore(client, 'bucket');
    const calls: [string, () => Promise<unknown>][] = [
      ['writeFlush shop', () => store.writeFlush(bad, 'j1', 'f1', PAYLOAD)],
      ['writeFlush job', () => store.writeFlush('s1', bad, 'f1', PAYLOAD)],
      ['writeFlush flush', () => store.writeFlush('s1', 'j1', bad, PAYLOAD)],
      ['writePlatformData shop', () => store.writePlatformData(bad, 'j1', {})],
      ['writePlatformData job', () => store.writePlatformData('s1', bad, {})],
      ['listJobObjects', () => store.listJobObjects(bad)],
      ['readAllDetails', () => store.readAllDetails(bad)],
      ['readAllDetailsWithSources', () => store.readAllDetailsWithSources(bad)],
      ['readPlatformData', () => store.readPlatformData(bad)],
    ];
    for (const [name, call] of calls) {
      await expect(call()).rejects.toBeInstanceOf(InvalidIdError);
      expect([name, send.mock.calls.length]).toEqual([name, 0]);
    }
  });

  it('a bad payload or platform data → InvalidInputError, zero S3 calls', async () => {
    const { client, send } = noIoClient();
    const store = new JobDetailsStore(client, 'bucket');
    await expect(
      store.writeFlush('s1', 'j1', 'f1', { ...PAYLOAD, failed: { r: [1] } } as never),
    ).rejects.toThrow(InvalidInputError);
    await expect(store.writePlatformData('s1', 'j1', [] as never)).rejects.toThrow(InvalidInputError);
    expect(send).not.toHaveBeenCalled();
  });

  it('readFlushObject refuses a key that is not a flush key, before any request', async () => {
    const { client, send } = noIoClient();
    const store = new JobDetailsStore(client, 'bucket');
    for (const key of [
      'job-details/j1/platform-data.json',
      'job-details/../x.json.gz',
      'other/j1/f.json.gz',
    ]) {
      await expect(store.readFlushObject(key)).rejects.toBeInstanceOf(InvalidInputError);
    }
    expect(send).not.toHaveBeenCalled();
  });

  it('rejects an empty bucket and a bad read concurrency at construction', () => {
    const { client } = noIoClient();
    expect(() => new JobDetailsStore(client, '')).toThrow(InvalidInputError);
    expect(() => new JobDetailsStore(client, 'b', { readConcurrency: 0 })).toThrow(InvalidInputError);
    expect(() => new JobDetailsStore(client, 'b', { readConcurrency: 2.5 })).toThrow(InvalidInputError);
  });
});

describe('listJobObjects against a misbehaving listing', () => {
  // No emulator returns IsTruncated without a token; a hand-made client is the only way to test it.
  it('fails rather than returning a partial listing', async () => {
    const send = jest.fn(async () => ({
      Contents: [{ Key: 'job-details/j1/f1.json.gz', Size: 1 }],
      IsTruncated: true,
    }));
    const store = new JobDetailsStore({ send } as unknown as S3Client, 'bucket');
    await expect(store.listJobObjects('j1')).rejects.toThrow(JobArchiveError);
    expect(send).toHaveBeenCalledTimes(1);
  });
});

describe('getJobDetailsStore (seed empty-bucket contract)', () => {
  afterEach(() => resetJobDetailsStore());

  it.each([undefined, '', '   '])('returns null for bucket %p without building a client', (bucket) => {
    const factory = jest.fn(() => noIoClient().client);
    expect(getJobDetailsStore(factory, bucket)).toBeNull();
    expect(factory).not.toHaveBeenCalled();
  });

  it('gives racing async callers one store and builds the S3 client once', async () => {
    const get = createJobDetailsStoreProvider();
    const factory = jest.fn(() => noIoClient().client);
    const stores = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        // Interleave the callers across microtask turns, as concurrent handler invocations would.
        for (let k = 0; k < i % 7; k++) await Promise.resolve();
        return get(factory, 'bucket-a');
      }),
    );
    expect(factory).toHaveBeenCalledTimes(1);
    expect(new Set(stores).size).toBe(1);
    expect(stores[0]).toBeInstanceOf(JobDetailsStore);
    expect(stores[0]?.bucket).toBe('bucket-a');
  });

  it('keeps one store per bucket, sharing the one client', () => {
    const get = createJobDetailsStoreProvider();
    const factory = jest.fn(() => noIoClient().client);
    const a = get(factory, 'a');
    const b = get(factory, 'b');
    expect(a).not.toBe(b);
    expect(get(factory, 'a')).toBe(a);
    expect(b?.bucket).toBe('b');
    expect(factory).toHaveBeenCalledTimes(1);
  });

  it('the process-wide getter memoizes until reset', () => {
    const factory = jest.fn(() => noIoClient().client);
    const first = getJobDetailsStore(factory, 'bucket');
    expect(getJobDetailsStore(factory, 'bucket')).toBe(first);
    resetJobDetailsStore();
    expect(getJobDetailsStore(factory, 'bucket')).not.toBe(first);
    expect(factory).toHaveBeenCalledTimes(2);
  });
});
