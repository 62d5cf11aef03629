import { PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { ConcurrentModificationError } from '../../shared/errors';
import { isNotFound, isPreconditionFailed, normalizeEtag, putConditional } from '../../shared/s3/objects';

const err = (name: string, status: number) =>
  new S3ServiceException({ name, $fault: 'client', message: name, $metadata: { httpStatusCode: status } });

describe('shared S3 primitives (pure bits)', () => {
  it('normalizeEtag strips the quotes S3 sends', () => {
    expect(normalizeEtag('"abc"')).toBe('abc');
    expect(normalizeEtag('abc')).toBe('abc');
    expect(normalizeEtag('"abc-2"')).toBe('abc-2');
    expect(normalizeEtag(undefined)).toBe('');
  });

  it('isNotFound: a missing key is absence; a missing bucket is not (fixed: it used to count as absent)', () => {
    expect(isNotFound(err('NoSuchKey', 404))).toBe(true);
    expect(isNotFound(err('NotFound', 404))).toBe(true);
    expect(isNotFound({ $metadata: { httpStatusCode: 404 } })).toBe(true);
    expect(isNotFound(err('NoSuchBucket', 404))).toBe(false);
    expect(isNotFound(err('AccessDenied', 403))).toBe(false);
    expect(isNotFound(null)).toBe(false);
  });

  it('isPreconditionFailed', () => {
    expect(isPreconditionFailed(err('PreconditionFailed', 412))).toBe(true);
    expect(isPreconditionFailed({ $metadata: { httpStatusCode: 412 } })).toBe(true);
    expect(isPreconditionFailed(err('NoSuchKey', 404))).toBe(false);
  });
});

// aws-sdk-client-mock: s3rver ignores If-Match / If-None-Match, so it never answers 412.
describe('putConditional (mocked S3: the 412 path)', () => {
  const s3 = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
  const mock = mockClient(s3);
  afterEach(() => mock.reset());

  it('creates with If-None-Match *, replaces with If-Match "etag", returns the new ETag unquoted', async () => {
    mock.on(PutObjectCommand).resolves({ ETag: '"new"' });
    expect(await putConditional(s3, { Bucket: 'b', Key: 'k', Body: 'x' }, null)).toBe('new');
    await putConditional(s3, { Bucket: 'b', Key: 'k', Body: 'x' }, 'old');
    const inputs = mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    expect(inputs[0]).toMatchObject({ IfNoneMatch: '*' });
    expect(inputs[0]).not.toHaveProperty('IfMatch');
    expect(inputs[1]).toMatchObject({ IfMatch: '"old"' });
  });

  it.each([
    ['PreconditionFailed', 412],
    ['ConditionalRequestConflict', 409],
  ])('%s → ConcurrentModificationError naming the key', async (name, status) => {
    mock.on(PutObjectCommand).rejects(err(name, status));
    const p = putConditional(s3, { Bucket: 'b', Key: 'job-details-index/s/m/index.json', Body: 'x' }, 'e');
    await expect(p).rejects.toBeInstanceOf(ConcurrentModificationError);
    await expect(p).rejects.toMatchObject({ key: 'job-details-index/s/m/index.json' });
  });

  it('other failures propagate unchanged', async () => {
    mock.on(PutObjectCommand).rejects(err('AccessDenied', 403));
    await expect(putConditional(s3, { Bucket: 'b', Key: 'k', Body: 'x' }, null)).rejects.toMatchObject({
      name: 'AccessDenied',
    });
  });
});
