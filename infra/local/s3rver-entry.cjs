'use strict';
/**
 * s3rver in its own Node process (started with --openssl-legacy-provider: s3rver encrypts
 * ListObjectsV2 continuation tokens with DES, which OpenSSL 3 only offers through the legacy provider;
 * without it paginated listings fail with HTTP 500).
 *
 * argv: <port> <directory>. Runs under the stack supervisor, which leads our process group; if the
 * supervisor dies without stopping us, we take the whole group (DynamoDB Local included) down.
 */
const S3rver = require('s3rver');
const AWSAccount = require('s3rver/lib/models/account');

const port = Number(process.argv[2]);
const directory = process.argv[3];
const supervisor = process.ppid;

// s3rver only knows the access key "S3RVER"; accept any key so real credentials in a developer's
// shell work against the local endpoint too (s3rver never checks v4 signatures anyway).
const registry = AWSAccount.registry;
const lookup = registry.get.bind(registry);
registry.get = (id) => lookup(id) ?? AWSAccount.DUMMY_ACCOUNT;

// s3rver's putObject answers before the file is fully written (it resolves on `end()` for buffers and
// on the transform's finish for streams, not on the file stream's 'close'), and rewrites the object,
// its md5 (the ETag) and its metadata in place, so a GET right after or during a PUT can read a
// truncated body or a half-written metadata file. S3 gives read-after-write consistency and the
// archiver relies on it (commit writes the index, delete reads it back): write all three to temp
// files, then rename them into place back to back.
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { pipeline } = require('node:stream/promises');
const { Transform } = require('node:stream');
const FilesystemStore = require('s3rver/lib/stores/filesystem');
const S3Object = require('s3rver/lib/models/object');

const tempName = (file) => `${file}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`;

FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  const md5Path = this.getResourcePath(object.bucket, object.key, 'object.md5');
  const metadataPath = this.getResourcePath(object.bucket, object.key, 'metadata.json');
  await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
  const md5 = crypto.createHash('md5');
  let size = 0;
  const count = new Transform({
    transform(chunk, encoding, callback) {
      md5.update(chunk, encoding);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  const tmp = { object: tempName(objectPath), md5: tempName(md5Path), metadata: tempName(metadataPath) };
  await pipeline(
    Buffer.isBuffer(object.content) ? [object.content] : object.content,
    count,
    fs.createWriteStream(tmp.object),
  );
  const digest = md5.digest('hex');
  const meta = object.metadata ?? {};
  const json = Object.fromEntries(
    Object.entries(meta).filter(
      ([k]) => S3Object.ALLOWED_METADATA.includes(k) || k.startsWith('x-amz-meta-'),
    ),
  );
  await fs.promises.writeFile(tmp.md5, digest);
  await fs.promises.writeFile(tmp.metadata, JSON.stringify(json, null, 2));
  await fs.promises.rename(tmp.object, objectPath);
  await fs.promises.rename(tmp.md5, md5Path);
  await fs.promises.rename(tmp.metadata, metadataPath);
  return { size, md5: digest };
};

// s3rver walks the bucket directory by directory, so a listing comes out in directory order, not in
// S3's key order: `job-details/a/x` before `job-details/a-b/x`, although `-` sorts before `/`. With
// StartAfter and MaxKeys that returns the wrong page. S3 lists in UTF-8 binary key order; so does this
// replacement: it walks each directory's entries in key order (a subdirectory `d` sorts as `d/`),
// skips what lies wholly before StartAfter, stops once it has a page, and reads metadata for the page.
const OBJECT_SUFFIX = '._S3rver_object';
const byKey = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function* keysInOrder(dirPath, keyPrefix, prefix, startAfter) {
  const entries = [];
  for (const name of fs.readdirSync(dirPath)) {
    const full = path.posix.join(dirPath, name);
    if (fs.statSync(full).isDirectory()) {
      entries.push({ sortKey: `${keyPrefix}${FilesystemStore.decodeKeyPath(name)}/`, full, dir: true });
    } else if (name.endsWith(OBJECT_SUFFIX)) {
      const key = `${keyPrefix}${FilesystemStore.decodeKeyPath(name.slice(0, -OBJECT_SUFFIX.length))}`;
      entries.push({ sortKey: key, full, dir: false });
    }
  }
  entries.sort((a, b) => byKey(a.sortKey, b.sortKey));
  for (const e of entries) {
    if (e.dir) {
      const k = e.sortKey; // every key below starts with it
      const intersectsPrefix = k.startsWith(prefix) || prefix.startsWith(k);
      const whollyBefore = byKey(k, startAfter) < 0 && !startAfter.startsWith(k);
      if (intersectsPrefix && !whollyBefore) yield* keysInOrder(e.full, k, prefix, startAfter);
    } else if (e.sortKey.startsWith(prefix) && byKey(e.sortKey, startAfter) > 0) {
      yield e.sortKey;
    }
  }
}

FilesystemStore.prototype.listObjects = async function listObjects(bucket, options) {
  const { delimiter = '', startAfter = '', prefix = '', maxKeys = Number.POSITIVE_INFINITY } = options;
  const keys = [];
  const commonPrefixes = new Set();
  let isTruncated = false;
  for (const key of keysInOrder(this.getBucketPath(bucket), '', prefix, startAfter)) {
    if (delimiter) {
      const idx = key.slice(prefix.length).indexOf(delimiter);
      if (idx !== -1) {
        commonPrefixes.add(key.slice(0, prefix.length + idx + delimiter.length));
        continue;
      }
    }
    if (keys.length >= maxKeys) {
      isTruncated = true;
      break;
    }
    keys.push(key);
  }
  const metadata = await Promise.all(
    keys.map((key) =>
      this.getMetadata(bucket, key).catch((err) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      }),
    ),
  );
  return {
    objects: keys
      .map((key, i) => [key, metadata[i]])
      .filter(([, m]) => m !== undefined)
      .map(([key, m]) => new S3Object(bucket, key, null, m)),
    commonPrefixes: [...commonPrefixes].sort(byKey),
    isTruncated,
  };
};

// s3rver's DeleteObjects deletes its keys concurrently, and each delete then removes its now empty
// parent directories with a readdir + rmdir that races the others' (ENOENT / ENOTEMPTY): the request
// fails with InternalError after deleting some keys, and the SDK's retry deletes the rest. S3 answers
// once. Same files removed; the directory cleanup tolerates the race.
FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
  await Promise.all(
    ['object', 'object.md5', 'metadata.json'].map((kind) =>
      fs.promises.unlink(this.getResourcePath(bucket, key, kind)).catch((err) => {
        if (err.code !== 'ENOENT') throw err;
      }),
    ),
  );
  const bucketPath = this.getBucketPath(bucket);
  const parts = key.split('/');
  parts.pop();
  while (parts.length) {
    const dir = path.join(bucketPath, ...parts);
    try {
      if ((await fs.promises.readdir(dir)).length > 0) return;
      await fs.promises.rmdir(dir);
    } catch (err) {
      if (err.code === 'ENOENT' || err.code === 'ENOTEMPTY') return;
      throw err;
    }
    parts.pop();
  }
};

// S3 conditional writes, which s3rver ignores: PutObject with `If-None-Match: *` fails with 412
// PreconditionFailed when the key exists; with `If-Match: "<etag>"` it fails with 412 when the ETag
// differs and 404 NoSuchKey when there is no object. The check and the write run under a per-key
// lock (every PUT takes it), so of two racing conditional PUTs one wins and the other gets 412, as
// in S3. The month index commit relies on exactly this.
const objectCtrl = require('s3rver/lib/controllers/object');
const S3Error = require('s3rver/lib/models/error');
const unconditionalPutObject = objectCtrl.putObject;
const keyLocks = new Map();
const withKeyLock = async (id, fn) => {
  const previous = keyLocks.get(id) ?? Promise.resolve();
  let release;
  const mine = new Promise((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  keyLocks.set(id, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (keyLocks.get(id) === tail) keyLocks.delete(id);
  }
};
const unquote = (etag) => String(etag).trim().replace(/^W\//, '').replace(/^"|"$/g, '');
/** The stored object's ETag (unquoted), or null when there is none. */
const currentEtag = async (ctx, bucket, key) => {
  try {
    return unquote((await ctx.store.getMetadata(bucket, key)).etag);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    return null;
  }
};
const preconditionFailed = (condition) =>
  new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
    Condition: condition,
  });
/** `If-Match: "<etag>"` as S3 answers it: NoSuchKey without an object, 412 on another ETag. */
const checkIfMatch = (current, ifMatch, key) => {
  if (current === null) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: key });
  if (current !== unquote(ifMatch)) throw preconditionFailed('If-Match');
};
objectCtrl.putObject = async function conditionalPutObject(ctx) {
  const { bucket, key } = ctx.params;
  return withKeyLock(`${bucket}/${key}`, async () => {
    const ifNoneMatch = ctx.headers['if-none-match'];
    const ifMatch = ctx.headers['if-match'];
    if (ifNoneMatch !== undefined || ifMatch !== undefined) {
      const current = await currentEtag(ctx, bucket, key);
      if (ifNoneMatch !== undefined) {
        if (ifNoneMatch.trim() !== '*') {
          throw new S3Error('NotImplemented', 'If-None-Match on PutObject accepts only *', {
            Header: 'If-None-Match',
          });
        }
        if (current !== null) throw preconditionFailed('If-None-Match');
      }
      if (ifMatch !== undefined) checkIfMatch(current, ifMatch, key);
    }
    return unconditionalPutObject(ctx);
  });
};

// s3rver's GET stats the object (Content-Length, ETag) and then opens the file by path: a PUT renaming a
// new object in between makes it stream the new bytes cut to the old length (a truncated gzip: the
// shared index, which every batch of a month rewrites, failed whole batches so). S3 serves one version
// whole. Under the PUTs' per-key lock the stat and the open see the same file; the body streams from
// the open descriptor after the lock is released, so a later rename cannot touch it.
// GetObject with `If-Match: "<etag>"` (s3rver ignores it) fails as S3 documents: 412
// PreconditionFailed when the object's ETag differs, 404 NoSuchKey when there is none — checked under
// the same lock, so the check and the bytes served are one version. The readers' later reads of a
// large month index rely on exactly this.
const unlockedGetObject = objectCtrl.getObject;
objectCtrl.getObject = async function lockedGetObject(ctx) {
  const { bucket, key } = ctx.params;
  return withKeyLock(`${bucket}/${key}`, async () => {
    const ifMatch = ctx.headers['if-match'];
    if (ifMatch !== undefined && ifMatch.trim() !== '*') {
      checkIfMatch(await currentEtag(ctx, bucket, key), ifMatch, key);
    }
    return unlockedGetObject(ctx);
  });
};

// DeleteObjects with a per-key `ETag` (S3 conditional deletes), which s3rver ignores: under the same
// per-key lock as PUTs, a key whose ETag differs gets a PreconditionFailed error entry, a missing key
// NoSuchKey, as S3 answers; keys without an ETag are deleted as before. The archiver deletes hot
// objects only if they are still the bytes it archived, and relies on exactly this.
const fromS3rver = (name) => require(require.resolve(name, { paths: [require.resolve('s3rver')] }));
const xmlParser = fromS3rver('fast-xml-parser');
const he = fromS3rver('he');
objectCtrl.deleteMultipleObjects = async function conditionalDeleteMultipleObjects(ctx) {
  const xml = await new Promise((resolve, reject) => {
    let payload = '';
    ctx.req.on('data', (data) => {
      payload += data.toString('utf8');
    });
    ctx.req.on('end', () => resolve(payload));
    ctx.req.on('error', reject);
  });
  const body =
    xmlParser.validate(xml) === true
      ? xmlParser.parse(xml, { tagValueProcessor: (a) => he.decode(a) })
      : null;
  if (!body?.Delete?.Object) {
    throw new S3Error(
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.',
    );
  }
  const { bucket } = ctx.params;
  const objects = [].concat(body.Delete.Object).map((o) => ({
    key: String(o.Key),
    etag: o.ETag === undefined ? undefined : unquote(o.ETag),
  }));
  const results = await Promise.all(
    objects.map(({ key, etag }) =>
      withKeyLock(`${bucket}/${key}`, async () => {
        const current = await currentEtag(ctx, bucket, key);
        if (etag !== undefined && current === null)
          return { error: { Key: key, Code: 'NoSuchKey', Message: 'The specified key does not exist.' } };
        if (etag !== undefined && current !== etag) {
          return {
            error: {
              Key: key,
              Code: 'PreconditionFailed',
              Message: 'At least one of the pre-conditions you specified did not hold',
            },
          };
        }
        if (current !== null) await ctx.store.deleteObject(bucket, key);
        return { deleted: { Key: key } };
      }),
    ),
  );
  const quiet = String(body.Delete.Quiet) === 'true';
  ctx.body = {
    DeleteResult: {
      '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
      ...(quiet ? {} : { Deleted: results.flatMap((r) => (r.deleted ? [r.deleted] : [])) }),
      Error: results.flatMap((r) => (r.error ? [r.error] : [])),
    },
  };
};

// (Wraps the store methods as patched above.) A write the file system refuses — a full disk (ENOSPC), a quota (EDQUOT), a file size limit (EFBIG),
// a read-only or failing disk — reached s3rver's generic handler and was answered as a bare
// InternalError ("We encountered an internal error"), so a run failed without saying why. S3 itself
// never runs out of space; the local one says what happened instead, still as a 500 InternalError
// (retried by clients like S3's), with the cause and the data directory in the message.
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EROFS', 'EIO']);
const StorageError = require('s3rver/lib/models/error');
for (const method of [
  'putObject',
  'putPart',
  'putObjectMultipart',
  'initiateUpload',
  'copyObject',
  'deleteObject',
  'putBucket',
  'putSubresource',
]) {
  const original = FilesystemStore.prototype[method];
  if (typeof original !== 'function') continue;
  FilesystemStore.prototype[method] = async function storageErrors(...args) {
    try {
      return await original.apply(this, args);
    } catch (err) {
      if (!STORAGE_CODES.has(err?.code)) throw err;
      throw new StorageError(
        'InternalError',
        `local S3 could not write to its data directory ${directory}: ${err.code} (${err.message}) — free space or raise the limit, then rerun`,
      );
    }
  };
}

const server = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
server.run().then(
  (addr) => process.stdout.write(`s3rver listening on ${addr.address}:${addr.port}\n`),
  (err) => {
    process.stderr.write(`s3rver failed to start: ${err.stack ?? err}\n`);
    process.exit(1);
  },
);

setInterval(() => {
  if (process.ppid === supervisor) return;
  try {
    process.kill(-supervisor, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
  process.exit(1);
}, 500).unref();
