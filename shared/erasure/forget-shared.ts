import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import {
  damagedBlocks,
  ERASURE_PREFIX,
  newIntent,
  newPartName,
  parseSharedIndexKey,
  SHARED_INDEX_PREFIX,
  type SharedIndex,
  type SharedPart,
  sharedPartKey,
  sharedPartWithoutDamage,
  sharedPartWithoutShop,
  sharedPendingKey,
  sharedPendingPrefix,
  shopsOfBlock,
  switchRepairedPart,
  switchSharedPart,
} from '../archive/format';
import { ABANDONED_AFTER_MS } from '../archive/steps/archive/pending-gc';
import { loadSharedIndex, updateSharedIndex } from '../archive/steps/commit/shared-store';
import type { StepDeps } from '../archive/steps/context';
import { ErasureIncompleteError, isNamedError } from '../errors';
import { getObjectBytes, listAllArray, putConditional, putJson } from '../s3/objects';

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
/** What the rewrite protocol needs (redact's deps are these too). */
type ShardDeps = Pick<StepDeps, 's3' | 'bucket' | 'clock'>;

const journalPrefix = (requestId: string): string => `${ERASURE_PREFIX}rewrites/${requestId}/`;

const deleteKey = (deps: ShardDeps, Key: string) =>
  deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key }));

/** Old parts a crashed pass switched away from but did not delete yet. */
export const finishJournal = async (deps: ShardDeps, requestId: string): Promise<number> => {
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
  /** Uncommitted shared parts (a dead run's, never in a shared index) that held the shop: deleted. */
  readonly uncommittedParts: number;
  /**
   * Uncommitted shared parts that hold (or, unreadable, may hold) the shop and are younger than
   * ABANDONED_AFTER_MS: their run may still be about to commit (it then refuses the forgotten shop and
   * deletes the part itself), so they are left, and the erasure is not complete while any is here.
   */
  readonly uncommittedLeft: readonly UncommittedPart[];
  readonly lists: number;
}

export interface SharedForgetIds {
  readonly requestId: string;
  readonly runId: string;
  /**
   * Drop damaged blocks that also hold other shops' records (their records cannot be read by anyone;
   * their entries leave those shops' views, counted in the receipt). Without it only blocks of the
   * forgotten shop alone are dropped, and a part with others' damaged blocks stops the forget.
   */
  readonly dropDamaged?: boolean;
}

export interface UncommittedPart {
  readonly key: string;
  /** When it counts as abandoned and the next forget deletes it (ISO). */
  readonly removableAt: string;
}

/**
 * Whether a part's bytes name the shop: its JSON-quoted id in any line (every job line of a shared
 * part names its segment's shop). A part that does not inflate may hold anything: true.
 */
export const namesShop = (bytes: Buffer, shopId: string): boolean => {
  try {
    return gunzipSync(bytes).includes(JSON.stringify(shopId));
  } catch {
    return true;
  }
};

/**
 * What dead runs left under a month's shared staging: parts with an intent and no entry in the shared
 * index, i.e. never committed (the archiver's own collection, collectAbandonedShared, waits for a batch
 * packing that month). Each that holds the shop goes once abandoned (part first, intent after); a
 * younger one is reported. 1 LIST per month, 1 GET per uncommitted part.
 */
const uncommittedOf = async (
  deps: StepDeps,
  shopId: string,
  month: string,
  committed: ReadonlySet<string>,
): Promise<{ abandoned: Array<{ part: string; intent: string }>; left: UncommittedPart[] }> => {
  const prefix = sharedPendingPrefix(month);
  const oldEnough = deps.clock().getTime() - ABANDONED_AFTER_MS;
  const abandoned: Array<{ part: string; intent: string }> = [];
  const left: UncommittedPart[] = [];
  for (const o of await listAllArray(deps.s3, deps.bucket, prefix)) {
    const name = o.key.slice(prefix.length).replace(/\.json$/, '');
    if (committed.has(name)) continue;
    const part = sharedPartKey(month, name);
    const got = await getObjectBytes(deps.s3, deps.bucket, part);
    if (!got || !namesShop(Buffer.from(got.bytes), shopId)) continue;
    const written = o.lastModified?.getTime() ?? Number.POSITIVE_INFINITY;
    if (written > oldEnough) {
      const at = Number.isFinite(written) ? written + ABANDONED_AFTER_MS : deps.clock().getTime();
      left.push({ key: part, removableAt: new Date(at).toISOString() });
    } else abandoned.push({ part, intent: o.key });
  }
  return { abandoned, left };
};

export const forgetSharedParts = async (
  deps: StepDeps,
  shopId: string,
  ids: SharedForgetIds,
  found: (n: Readonly<Record<string, number>>) => Promise<void>,
): Promise<SharedForget> => {
  await finishJournal(deps, ids.requestId);
  const months = (await listAllArray(deps.s3, deps.bucket, SHARED_INDEX_PREFIX))
    .map((o) => parseSharedIndexKey(o.key))
    .filter((m): m is string => m !== null);
  const work: Array<{ month: string; old: SharedPart }> = [];
  const abandoned: Array<{ part: string; intent: string }> = [];
  const uncommittedLeft: UncommittedPart[] = [];
  for (const month of months) {
    const { index } = await loadSharedIndex(deps, month);
    for (const old of index.parts) if (Object.hasOwn(old.segments, shopId)) work.push({ month, old });
    const u = await uncommittedOf(deps, shopId, month, new Set(index.parts.map((p) => p.name)));
    abandoned.push(...u.abandoned);
    uncommittedLeft.push(...u.left);
  }
  if (work.length > 0 || abandoned.length > 0)
    await found({ sharedParts: work.length, uncommittedParts: abandoned.length });
  // Never committed, so no index names them: the part first, its intent (what marks it) after.
  for (const a of abandoned) {
    await deleteKey(deps, a.part);
    await deleteKey(deps, a.intent);
  }
  for (const { month, old } of work) await rewriteWithout(deps, month, old, shopId, ids, found);
  return {
    sharedParts: work.length,
    uncommittedParts: abandoned.length,
    uncommittedLeft,
    lists: 2 + months.length,
  };
};

/**
 * Writes `bytes` as the part that replaces `old` in the month's shared index: intent, write-once PUT,
 * read-back against its SHA-256, the journal, the switch (`change`, re-applied on a 412), the old
 * part deleted, then the intent and the journal. `bytes` null: the old part is only switched away
 * from and deleted.
 */
const replaceSharedPart = async (
  deps: ShardDeps,
  month: string,
  old: SharedPart,
  built: {
    bytes: Buffer | null;
    sha256: string | null;
    part: Omit<SharedPart, 'etag' | 'run_id' | 'committed_at'> | null;
  },
  ids: SharedForgetIds,
  change: (current: SharedIndex, next: SharedPart | null, at: string) => SharedIndex | null,
): Promise<SharedPart | null> => {
  const now = deps.clock();
  let next: SharedPart | null = null;
  const name = built.part?.name;
  const intentKey = name ? sharedPendingKey(month, name) : null;
  if (built.bytes && built.part && name && intentKey) {
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
        Body: built.bytes,
        ContentType: 'application/gzip',
      },
      null,
    );
    const back = await getObjectBytes(deps.s3, deps.bucket, sharedPartKey(month, name));
    const sha = back ? createHash('sha256').update(back.bytes).digest('hex') : null;
    if (!back || back.etag !== etag || sha !== built.sha256)
      throw new ErasureIncompleteError(
        ids.requestId,
        `the rewritten shared part ${name} did not read back as written`,
      );
    next = { ...built.part, etag, run_id: ids.runId, committed_at: now.toISOString() };
  }
  const journal = `${journalPrefix(ids.requestId)}${month}/${old.name}`;
  await putJson(deps, journal, {});
  await updateSharedIndex(deps, month, (current) => change(current, next, now.toISOString()));
  await deleteKey(deps, sharedPartKey(month, old.name));
  if (intentKey && next) await deleteKey(deps, intentKey);
  await deleteKey(deps, journal);
  return next;
};

/**
 * A shared part whose blocks do not all inflate, repaired as the shop is cut out of it — in memory,
 * one new part, one switch: its damaged blocks dropped (sharedPartWithoutDamage; every view's entries
 * in them with them), then the shop's lines (sharedPartWithoutShop on the repaired bytes). So no part
 * that still holds the shop is ever written. Blocks of the forgotten shop alone go without asking (the
 * erasure removes them anyway); blocks that also hold other shops' records only with `dropDamaged`.
 * The blocks, and the other shops' entries in them, are recorded before anything changes.
 */
const repairWithout = async (
  deps: StepDeps,
  month: string,
  old: SharedPart,
  bytes: Uint8Array,
  shopId: string,
  ids: SharedForgetIds,
  found: (n: Readonly<Record<string, number>>) => Promise<void>,
): Promise<void> => {
  const key = sharedPartKey(month, old.name);
  let damaged: number[];
  try {
    damaged = damagedBlocks(bytes, old);
  } catch (err) {
    throw new ErasureIncompleteError(
      ids.requestId,
      `shared part ${key} is damaged and cannot be repaired block by block (${(err as Error).message})`,
    );
  }
  if (damaged.length === 0)
    throw new ErasureIncompleteError(ids.requestId, `shared part ${key} could not be cut without the shop`);
  const others = damaged.filter((o) => shopsOfBlock(old, o).some((s) => s !== shopId));
  if (others.length > 0 && !ids.dropDamaged)
    throw new ErasureIncompleteError(
      ids.requestId,
      `shared part ${key} has ${others.length} block(s) that do not inflate and also hold other shops' records; ` +
        `forget with dropDamaged (jobarchive forget --drop-damaged) drops them and those records, counted in the receipt (docs/erasure.md "A damaged shared part")`,
    );
  const lost = new Set(damaged);
  const { index } = await loadSharedIndex(deps, month);
  let entriesOfOthers = 0;
  for (const [shop, view] of index.views) {
    if (shop === shopId) continue;
    for (const entries of Object.values(view.jobs))
      for (const e of entries)
        if (
          e.part === old.name &&
          (lost.has(e.offset) || (e.platform_data && lost.has(e.platform_data.offset)))
        )
          entriesOfOthers++;
  }
  await found({ damagedBlocksDropped: damaged.length, otherShopsEntriesDropped: entriesOfOthers });
  const repaired = sharedPartWithoutDamage(bytes, old, newPartName(deps.clock()));
  const at = deps.clock().toISOString();
  // The repaired part as the index would list it: never written, only passed through.
  const mid: SharedPart | null = repaired.part
    ? { ...repaired.part, etag: '', run_id: ids.runId, committed_at: at }
    : null;
  const final =
    mid && repaired.bytes && Object.hasOwn(mid.segments, shopId)
      ? sharedPartWithoutShop(repaired.bytes, mid, shopId, newPartName(deps.clock()))
      : repaired;
  await replaceSharedPart(deps, month, old, final, ids, (current, next, when) => {
    // Nothing of the shop survived the repair: the repaired part (or none) replaces the old.
    if (final === repaired) return switchRepairedPart(current, old.name, next, repaired.moves, when).index;
    const r = switchRepairedPart(current, old.name, mid, repaired.moves, when);
    return r.index && switchSharedPart(r.index, (mid as SharedPart).name, shopId, next, when);
  });
};

const rewriteWithout = async (
  deps: StepDeps,
  month: string,
  old: SharedPart,
  shopId: string,
  ids: SharedForgetIds,
  found: (n: Readonly<Record<string, number>>) => Promise<void>,
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
  let r: ReturnType<typeof sharedPartWithoutShop>;
  try {
    r = sharedPartWithoutShop(got.bytes, old, shopId, newPartName(deps.clock()));
  } catch (err) {
    // A block of the shop's segment that does not inflate (or a part not of its committed size).
    if (!isNamedError(err, 'CorruptObjectError') && !isNamedError(err, 'InvalidInputError')) throw err;
    return repairWithout(deps, month, old, got.bytes, shopId, ids, found);
  }
  await replaceSharedPart(deps, month, old, r, ids, (current, next, at) =>
    switchSharedPart(current, old.name, shopId, next, at),
  );
};
