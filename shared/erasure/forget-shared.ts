import { createHash } from 'node:crypto';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import {
  newIntent,
  newPartName,
  parseSharedIndexKey,
  SHARED_INDEX_PREFIX,
  type SharedPart,
  sharedPartKey,
  sharedPartWithoutShop,
  sharedPendingKey,
  switchSharedPart,
} from '../archive/format';
import { loadSharedIndex, updateSharedIndex } from '../archive/steps/commit/shared-store';
import type { StepDeps } from '../archive/steps/context';
import { ErasureIncompleteError, isNamedError } from '../errors';
import { getObjectBytes, listAllArray, putConditional, putJson } from '../s3/objects';
import { ERASURE_PREFIX } from './ledger';

/**
 * A forgotten shop's segments in shared parts (small shop-months packed together: docs/archive-format.md,
 * "Shared parts"), removed by the rewrite protocol of that format: for each shared part that holds a
 * segment of the shop, a new part of the other shops' segments (bytes copied, not re-encoded) under its
 * intent, read back and checked against its SHA-256, then the month's shared index switched to it
 * (If-Match; the shop's view loses the part), then the old part deleted.
 *
 * A crash between the switch and the old part's deletion would leave the old part (and the shop's
 * bytes) unnamed by any index: a journal entry `job-details-erasure/rewrites/{request}/{month}/{old part}`
 * is written before the switch and removed after the deletion; every pass finishes the entries of its
 * request first. An uncommitted new part (a crash before the switch) is under its intent, which the
 * archiver's shared-part collection removes once abandoned; it holds only other shops' bytes.
 */
const journalPrefix = (requestId: string): string => `${ERASURE_PREFIX}rewrites/${requestId}/`;

const deleteKey = (deps: StepDeps, Key: string) =>
  deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key }));

/** Old parts a crashed pass switched away from but did not delete yet. */
const finishJournal = async (deps: StepDeps, requestId: string): Promise<number> => {
  let done = 0;
  for (const o of await listAllArray(deps.s3, deps.bucket, journalPrefix(requestId))) {
    const [month, oldName] = o.key.slice(journalPrefix(requestId).length).split('/');
    if (!month || !oldName) continue;
    const { index } = await loadSharedIndex(deps, month);
    // Still listed: the switch did not happen; this pass rewrites the part again.
    if (!index.parts.some((p) => p.name === oldName)) {
      await deleteKey(deps, sharedPartKey(month, oldName));
      done++;
    }
    await deleteKey(deps, o.key);
  }
  return done;
};

export interface SharedForget {
  /** Shared parts the shop had a segment in (rewritten without it, or deleted when it was alone). */
  readonly sharedParts: number;
  readonly lists: number;
}

export const forgetSharedParts = async (
  deps: StepDeps,
  shopId: string,
  ids: { requestId: string; runId: string },
  found: (sharedParts: number) => Promise<void>,
): Promise<SharedForget> => {
  await finishJournal(deps, ids.requestId);
  const months = (await listAllArray(deps.s3, deps.bucket, SHARED_INDEX_PREFIX))
    .map((o) => parseSharedIndexKey(o.key))
    .filter((m): m is string => m !== null);
  const work: Array<{ month: string; old: SharedPart }> = [];
  for (const month of months) {
    const { index } = await loadSharedIndex(deps, month);
    for (const old of index.parts) if (Object.hasOwn(old.segments, shopId)) work.push({ month, old });
  }
  if (work.length > 0) await found(work.length);
  for (const { month, old } of work) await rewriteWithout(deps, month, old, shopId, ids);
  return { sharedParts: work.length, lists: 2 };
};

const rewriteWithout = async (
  deps: StepDeps,
  month: string,
  old: SharedPart,
  shopId: string,
  ids: { requestId: string; runId: string },
): Promise<void> => {
  const oldKey = sharedPartKey(month, old.name);
  let got: Awaited<ReturnType<typeof getObjectBytes>>;
  try {
    got = await getObjectBytes(deps.s3, deps.bucket, oldKey);
  } catch (err) {
    if (isNamedError(err, 'InvalidObjectState'))
      throw new ErasureIncompleteError(
        ids.requestId,
        `shared part ${oldKey} is in a Glacier class: restore it (it holds other shops' data) and run forget again`,
      );
    throw err;
  }
  if (!got) throw new ErasureIncompleteError(ids.requestId, `shared part ${oldKey} is missing`);
  const now = deps.clock();
  const name = newPartName(now);
  const r = sharedPartWithoutShop(got.bytes, old, shopId, name);
  let next: SharedPart | null = null;
  const intentKey = sharedPendingKey(month, name);
  if (r.bytes && r.part) {
    const intent = newIntent({
      shop_id: '_shared',
      month,
      part: name,
      part_key: sharedPartKey(month, name),
      run_id: ids.runId,
      created_at: now.toISOString(),
    });
    await putJson(deps, intentKey, intent);
    const etag = await putConditional(
      deps.s3,
      {
        Bucket: deps.bucket,
        Key: sharedPartKey(month, name),
        Body: r.bytes,
        ContentType: 'application/gzip',
      },
      null,
    );
    const back = await getObjectBytes(deps.s3, deps.bucket, sharedPartKey(month, name));
    const sha = back ? createHash('sha256').update(back.bytes).digest('hex') : null;
    if (!back || back.etag !== etag || sha !== r.sha256)
      throw new ErasureIncompleteError(
        ids.requestId,
        `the rewritten shared part ${name} did not read back as written`,
      );
    next = { ...r.part, etag, run_id: ids.runId, committed_at: now.toISOString() };
  }
  const journal = `${journalPrefix(ids.requestId)}${month}/${old.name}`;
  await putJson(deps, journal, {});
  await updateSharedIndex(deps, month, (current) =>
    switchSharedPart(current, old.name, shopId, next, now.toISOString()),
  );
  await deleteKey(deps, oldKey);
  if (next) await deleteKey(deps, intentKey);
  await deleteKey(deps, journal);
};
