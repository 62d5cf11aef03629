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
