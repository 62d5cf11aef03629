import { createHash } from 'node:crypto';
import {
  DeleteObjectCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  RestoreObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type ByteRange,
  damagedBlocks,
  filtersMember,
  type IndexedPart,
  isFiltersMember,
  type MonthIndex,
  monthIndexDir,
  newPartName,
  parseMonthIndexKey,
  parseSharedIndexKey,
  partKey,
  SHARED_INDEX_PREFIX,
  type SharedPart,
  sharedPartKey,
  sharedPartWithoutDamage,
  shopIndexPrefix,
  shopsOfBlock,
  switchRepairedPart,
} from '../archive/format';
import { loadMonthIndex, updateMonthIndex } from '../archive/steps/commit/index-store';
import { loadSharedIndex, updateSharedIndex } from '../archive/steps/commit/shared-store';
import { INLINE_DETAIL_ATTRIBUTES } from '../details/inline';
import { JobDetailsStore } from '../details/store';
import { CorruptObjectError, InvalidInputError, JobArchiveError, VerificationError } from '../errors';
import { validateShopId } from '../ids';
import { jobPk, jobSk } from '../jobs/schema';
import type { DdbSender } from '../jobs/types';
import {
  getJson,
  getObjectBytes,
  isNotFound,
  listAll,
  normalizeEtag,
  putConditional,
  putJson,
} from '../s3/objects';
import { partMayList, partsToCheck } from './candidates';
import { redactFlushObject } from './redact-hot';
import { partBlocks, redactPart } from './redact-part';
import { redactRow } from './redact-row';
import { redactSharedSegment, switchRedactedSharedPart } from './redact-shared';
import { switchPart } from './switch-part';

/**
 * Redacts one document of one shop everywhere it is stored: the hot flush objects that list it
 * (rewritten in place, If-Match), and every committed part whose document filters match it
 * (rewritten as a new part, switched in the month index, verified, and only then the old part
 * deleted). A part in Glacier Flexible Retrieval / Deep Archive is not readable: its restore is
 * requested and the part reported pending; a later run (a rerun, or the archiver's scheduled run)
 * finishes it. Idempotent: a rerun finds nothing left where the work is done, and a journal object
 * per part rewrite (`…/{month}/redact/{old part}.json`, naming the two parts, never the document)
 * lets any later run finish or undo a rewrite a crash interrupted.
 */
export interface RedactRequest {
  readonly shopId: string;
  readonly docId: string;
  /**
   * Repair a damaged shared part whose unreadable blocks hold the shop's records by dropping those
   * blocks (and every record in them, other shops' included: counted in the report). Without it such
   * a part is left pending (`damaged`). docs/erasure.md "A damaged shared part".
   */
  readonly dropDamaged?: boolean;
}

export interface RedactDeps {
  readonly s3: S3Client;
  readonly ddb: DdbSender;
  readonly bucket: string;
  readonly table: string;
  readonly clock: () => Date;
  /** RestoreObject of a part in Flexible Retrieval / Deep Archive. */
  readonly restoreTier: 'Expedited' | 'Standard' | 'Bulk';
  readonly restoreDays: number;
  /** Test hook: called at each crash point of a part rewrite (see REDACT_CRASH_POINTS). */
  readonly crashPoint?: (point: RedactCrashPoint) => Promise<void> | void;
}

export const REDACT_CRASH_POINTS = [
  'journal-written',
  'new-part-written',
  'index-switched',
  'old-part-deleted',
  'hot-object-rewritten',
] as const;
export type RedactCrashPoint = (typeof REDACT_CRASH_POINTS)[number];

/** A rewritten part whose old object was deleted early in a class with a minimum storage duration. */
export interface EarlyDeletion {
  readonly key: string;
  readonly storageClass: string;
  readonly bytes: number;
  readonly ageDays: number;
  readonly minDays: number;
  /** Days billed though not stored: minDays − age (> 0). */
  readonly chargedDays: number;
}

export interface PendingPart {
  readonly key: string;
  readonly storageClass: string;
  /**
   * `restore-requested`: this run asked for the restore; `restore-in-progress`: one was already
   * running; `rewrite-in-progress`: another redaction's rewrite of the part started less than
   * less than its deadline ago (journalDeadline: it may still be running: left alone).
   */
  readonly reason: 'restore-requested' | 'restore-in-progress' | 'rewrite-in-progress' | 'damaged';
}

export interface RedactReport {
  readonly shopId: string;
  readonly at: string;
  readonly hot: { readonly jobs: number; readonly objectsRewritten: number; readonly listings: number };
  /** Pre-migration rows whose inline details listed the document (shared/details/inline.ts): rewritten. */
  readonly rows: { readonly rewritten: number; readonly listings: number };
  readonly archive: {
    readonly months: number;
    readonly partsChecked: number;
    readonly partsRewritten: readonly {
      readonly old: string;
      readonly new: string;
      readonly listings: number;
    }[];
    readonly listings: number;
    /** Rewrites an earlier, interrupted run left, finished (or rolled back and redone) by this one. */
    readonly journalsResolved: number;
    /** Blocks of damaged shared parts dropped (dropDamaged), and the job entries (any shop's) in them. */
    readonly damagedBlocksDropped: number;
    readonly damagedEntriesDropped: number;
  };
  /** Parts still to redact once restored: the redaction is incomplete while this is not empty. */
  readonly pending: readonly PendingPart[];
  readonly earlyDeletions: readonly EarlyDeletion[];
  readonly complete: boolean;
}

export const REDACT_JOURNAL_FORMAT = 'job-details-archive/redact@1';
/**
 * A journal whose new part is not committed is rolled back (the new part deleted) only once it is
 * past its writer's deadline: a younger one may belong to a redaction still running, whose part it
 * would delete under it. The deadline is the journal's own (`switch_by`, journalDeadline: what its one
 * PUT and one read-back of the part can take), at most this; a journal without one waits this long.
 */
export const JOURNAL_ROLLBACK_AFTER_MS = 60 * 60 * 1000;
/**
 * A rewrite's writer switches only before its journal's `switch_by`; a later run rolls it back only
 * this long after it, so the writer's one index write (and two clocks' skew) never meets a rollback.
 */
export const JOURNAL_ROLLBACK_MARGIN_MS = 60_000;

/**
 * The time a writer has from its journal to the index switch: 2 minutes, plus 2 seconds per MB of
 * the new part (its PUT and its read-back at a pessimistic 1 MB/s), at most JOURNAL_ROLLBACK_AFTER_MS.
 * A redaction killed mid-rewrite is then rolled back by the next run minutes later, not an hour.
 */
export const journalDeadline = (writtenAt: Date, bytes: number): Date =>
  new Date(
    writtenAt.getTime() + Math.min(JOURNAL_ROLLBACK_AFTER_MS, 120_000 + Math.ceil(bytes / 1_000_000) * 2_000),
  );

/** Whether an uncommitted rewrite's journal may be rolled back at `now` (its writer is past its deadline). */
const rollbackDue = (j: Journal, now: Date): boolean => {
  const written = Date.parse(j.written_at ?? j.at);
  const deadline = j.switch_by !== undefined ? Date.parse(j.switch_by) : written + JOURNAL_ROLLBACK_AFTER_MS;
  return (
    now.getTime() >= Math.min(deadline, written + JOURNAL_ROLLBACK_AFTER_MS) + JOURNAL_ROLLBACK_MARGIN_MS
  );
};
const REDACT_DIR = 'redact/';
/** A damaged shared part less its unreadable blocks, in memory (Redaction.damagedShared). */
interface Repair {
  readonly mid: SharedPart | null;
  readonly bytes: Buffer | null;
  readonly moves: ReadonlyMap<number, ByteRange>;
  readonly dropped: readonly number[];
  /** Job entries (any shop's) whose record or platform data was in a dropped block. */
  readonly entries: number;
}

/** Classes with a minimum billed duration (days), by S3's StorageClass name. */
export const MIN_STORAGE_DAYS: Readonly<Record<string, number>> = {
  GLACIER_IR: 90,
  GLACIER: 90,
  DEEP_ARCHIVE: 180,
};
const NEEDS_RESTORE = new Set(['GLACIER', 'DEEP_ARCHIVE']);

export const resolveRedactRequest = (r: RedactRequest): RedactRequest => {
  const shopId = validateShopId(r.shopId);
  if (typeof r.docId !== 'string' || r.docId.length === 0)
    throw new InvalidInputError('docId', 'must be a non-empty string');
  return { shopId, docId: r.docId, ...(r.dropDamaged === true ? { dropDamaged: true } : {}) };
};

/** Age-based early-deletion charge of deleting `head`'s object now (null: none applies). */
export const earlyDeletion = (
  key: string,
  head: Pick<HeadObjectCommandOutput, 'StorageClass' | 'LastModified' | 'ContentLength'>,
  now: Date,
): EarlyDeletion | null => {
  const storageClass = head.StorageClass ?? 'STANDARD';
  const minDays = MIN_STORAGE_DAYS[storageClass];
  if (minDays === undefined || !head.LastModified) return null;
  const ageDays = (now.getTime() - head.LastModified.getTime()) / 86_400_000;
  if (ageDays >= minDays) return null;
  return {
    key,
    storageClass,
    bytes: head.ContentLength ?? 0,
    ageDays,
    minDays,
    chargedDays: minDays - ageDays,
  };
};

/** `ongoing-request="false"` in the Restore header: a restored copy is readable. */
const restored = (head: HeadObjectCommandOutput): boolean =>
  /ongoing-request="false"/.test(head.Restore ?? '');
const restoring = (head: HeadObjectCommandOutput): boolean =>
  /ongoing-request="true"/.test(head.Restore ?? '');

interface Journal {
  readonly format: string;
  readonly shop_id: string;
  readonly month: string;
  readonly old: string;
  readonly new: string;
  readonly at: string;
  /** When the journal was written (its age decides whether an uncommitted rewrite may be rolled back). */
  readonly written_at: string;
  /** The writer switches the index only before this (journalDeadline); a rollback waits until after it. */
  readonly switch_by?: string;
  /** The parts are shared parts (`_shared/{month}/…`, switched in the month's shared index). */
  readonly shared?: true;
}

const journalKey = (shopId: string, month: string, oldName: string): string =>
  `${monthIndexDir(shopId, month)}${REDACT_DIR}${oldName}.json`;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

class Redaction {
  private readonly at: string;
  private readonly hot = { jobs: 0, objectsRewritten: 0, listings: 0 };
  private readonly rows = { rewritten: 0, listings: 0 };
  private readonly archive = {
    months: 0,
    partsChecked: 0,
    partsRewritten: [] as { old: string; new: string; listings: number }[],
    listings: 0,
    journalsResolved: 0,
    damagedBlocksDropped: 0,
    damagedEntriesDropped: 0,
  };
  private readonly pending: PendingPart[] = [];
  /** Each month's shared views as last loaded (what a repair counts the entries of). */
  private readonly sharedViews = new Map<string, ReadonlyMap<string, MonthIndex>>();
  private readonly early: EarlyDeletion[] = [];

  constructor(
    private readonly deps: RedactDeps,
    private readonly req: RedactRequest,
  ) {
    this.at = deps.clock().toISOString();
  }

  private async crash(p: RedactCrashPoint): Promise<void> {
    await this.deps.crashPoint?.(p);
  }

  private del = async (key: string): Promise<void> => {
    await this.deps.s3.send(new DeleteObjectCommand({ Bucket: this.deps.bucket, Key: key }));
  };

  private async head(key: string): Promise<HeadObjectCommandOutput | null> {
    try {
      return await this.deps.s3.send(new HeadObjectCommand({ Bucket: this.deps.bucket, Key: key }));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async run(): Promise<RedactReport> {
    const { shopId } = this.req;
    const months: string[] = [];
    const journals: string[] = [];
    for await (const o of listAll(this.deps.s3, this.deps.bucket, shopIndexPrefix(shopId))) {
      const m = parseMonthIndexKey(o.key);
      if (m) months.push(m.month);
      else if (o.key.includes(`/${REDACT_DIR}`) && o.key.endsWith('.json')) journals.push(o.key);
    }
    // First what an interrupted run left half done: each journal is finished or rolled back (a
    // young uncommitted one is left: its part counts as busy).
    const busy = new Set<string>();
    for (const key of journals) {
      const old = await this.resolveJournal(key);
      if (old) busy.add(old);
    }
    // Hot objects first (the shop's rows and the index entries whose hot copies are not deleted),
    // then the indexes read again: a part an archival run committed meanwhile from hot objects read
    // before their redaction is then seen and redacted too.
    const before = new Map<string, MonthIndex>();
    for (const month of months.sort())
      before.set(month, (await loadMonthIndex(this.deps, shopId, month)).index);
    await this.redactHot(before);
    for (const month of await this.months()) {
      this.archive.months++;
      const { index } = await loadMonthIndex(this.deps, shopId, month);
      const check = await partsToCheck(this.deps, shopId, month, this.req.docId);
      for (const part of index.parts) {
        if (!check.has(part.name)) continue;
        if (busy.has(part.key)) {
          this.archive.partsChecked++;
          this.pending.push({ key: part.key, storageClass: 'STANDARD', reason: 'rewrite-in-progress' });
        } else await this.redactArchivedPart(month, part);
      }
    }
    await this.redactSharedParts(busy);
    return {
      shopId,
      at: this.at,
      hot: { ...this.hot },
      rows: { ...this.rows },
      archive: { ...this.archive },
      pending: this.pending,
      earlyDeletions: this.early,
      complete: this.pending.length === 0,
    };
  }

  /**
   * Packed shop-months (a shared part and `_shared/{month}/shared.json`, docs/archive-format.md): a
   * shared part whose filters in the shop's view may list the document (or that has none) is rewritten
   * with only the shop's segment redacted, by the protocol of an own part with the shared index as
   * the month index (the journal under the shop's month, `shared: true`).
   */
  private async redactSharedParts(busy: ReadonlySet<string>): Promise<void> {
    for await (const o of listAll(this.deps.s3, this.deps.bucket, SHARED_INDEX_PREFIX)) {
      const month = parseSharedIndexKey(o.key);
      if (month === null) continue;
      const { index } = await loadSharedIndex(this.deps, month);
      this.sharedViews.set(month, index.views);
      for (const p of index.views.get(this.req.shopId)?.parts ?? []) {
        if (!(await partMayList(this.deps, this.req.shopId, p, this.req.docId))) continue;
        const part = index.parts.find((x) => x.name === p.name);
        if (!part)
          throw new CorruptObjectError(
            o.key,
            `the shop's view names ${p.name}, the index lists no such part`,
          );
        if (busy.has(p.key)) {
          this.archive.partsChecked++;
          this.pending.push({ key: p.key, storageClass: 'STANDARD', reason: 'rewrite-in-progress' });
        } else await this.redactSharedPart(month, part);
      }
    }
  }

  /**
   * A redacted part's write, own or shared: 1. the journal, before the new part's first byte (a crash
   * from here on is resolved by any later run); 2. the new part, write-once; 3. the read-back: the
   * stored bytes are the ones built (so every block inflates and lacks the document); 4. not past the
   * journal's rollback age, when another run may have taken this rewrite for a dead one and removed
   * its part. Returns the new part's ETag and the time the index switch is stamped with.
   */
  private async writeRedacted(
    names: { shopId: string; month: string; old: string; new: string; shared?: true },
    key: string,
    body: Buffer,
    bodySha256: string,
  ): Promise<{ etag: string; at: string }> {
    const written = this.deps.clock();
    const journal: Journal = {
      format: REDACT_JOURNAL_FORMAT,
      shop_id: names.shopId,
      month: names.month,
      old: names.old,
      new: names.new,
      at: this.at,
      written_at: written.toISOString(),
      switch_by: journalDeadline(written, body.length).toISOString(),
      ...(names.shared ? { shared: true } : {}),
    };
    await putJson(this.deps, journalKey(names.shopId, names.month, names.old), journal);
    await this.crash('journal-written');
    const etag = await putConditional(
      this.deps.s3,
      { Bucket: this.deps.bucket, Key: key, Body: body, ContentType: 'application/gzip' },
      null,
    );
    await this.crash('new-part-written');
    const back = await getObjectBytes(this.deps.s3, this.deps.bucket, key);
    if (!back || back.etag !== etag || sha256(back.bytes) !== bodySha256)
      throw new VerificationError(
        key,
        'the redacted part read back differs from what was written; old part kept',
      );
    const at = this.deps.clock().toISOString();
    if (Date.parse(at) >= Date.parse(journal.switch_by as string))
      throw new JobArchiveError(
        `${key}: the rewrite outlived its journal's deadline (${journal.switch_by}); left for the next run`,
      );
    return { etag, at };
  }

  private async redactSharedPart(month: string, part: SharedPart): Promise<void> {
    const { shopId, docId } = this.req;
    this.archive.partsChecked++;
    const oldKey = sharedPartKey(month, part.name);
    const head = await this.head(oldKey);
    if (!head) throw new CorruptObjectError(oldKey, 'committed shared part is missing');
    const storageClass = head.StorageClass ?? 'STANDARD';
    if (NEEDS_RESTORE.has(storageClass) && !restored(head)) {
      this.pending.push({ key: oldKey, storageClass, reason: await this.requestRestore(oldKey, head) });
      return;
    }
    const got = await getObjectBytes(this.deps.s3, this.deps.bucket, oldKey);
    if (!got || got.size !== part.size)
      throw new VerificationError(
        oldKey,
        'the stored shared part is not the one its shared index committed; nothing rewritten',
      );
    // Damaged (some blocks do not inflate): repaired in memory first, when allowed (damagedShared).
    let source: { bytes: Buffer; part: SharedPart } = { bytes: Buffer.from(got.bytes), part };
    let repair: Repair | null = null;
    if (got.etag !== part.etag) {
      const damaged = this.damagedShared(month, part, got.bytes);
      if (damaged === 'pending') {
        this.pending.push({ key: oldKey, storageClass, reason: 'damaged' });
        return;
      }
      if (damaged !== 'intact') {
        repair = damaged;
        if (damaged.mid && damaged.bytes) source = { bytes: damaged.bytes, part: damaged.mid };
      }
    }
    const name = newPartName(this.deps.clock());
    const r =
      repair && !(repair.mid && Object.hasOwn(repair.mid.segments, shopId))
        ? null
        : redactSharedSegment(source.bytes, source.part, {
            shopId,
            docId,
            at: this.at,
            newName: name,
            where: oldKey,
          });
    if (!r && !repair) return; // a filter's false match
    // The part written: the redacted one, or (nothing of the document readable) the repaired one.
    const built = r
      ? { name, bytes: r.bytes, sha256: r.sha256 }
      : repair?.mid && repair.bytes
        ? { name: repair.mid.name, bytes: repair.bytes, sha256: sha256(repair.bytes) }
        : null;
    const key = built ? sharedPartKey(month, built.name) : null;
    const { etag, at } =
      built && key
        ? await this.writeRedacted(
            { shopId, month, old: part.name, new: built.name, shared: true },
            key,
            built.bytes,
            built.sha256,
          )
        : { etag: '', at: this.deps.clock().toISOString() };
    const next: SharedPart | null = r
      ? { ...source.part, ...r.part, etag }
      : repair?.mid
        ? { ...repair.mid, etag }
        : null;
    const written = await updateSharedIndex(this.deps, month, (current) => {
      const sw = r ? { ...r.switch, key: key as string } : null;
      if (!repair) return sw && switchRedactedSharedPart(current, shopId, next as SharedPart, sw, at);
      if (!r) return switchRepairedPart(current, part.name, next, repair.moves, at).index;
      const mid = switchRepairedPart(current, part.name, repair.mid, repair.moves, at).index;
      return mid && sw && switchRedactedSharedPart(mid, shopId, next as SharedPart, sw, at);
    });
    if (next && !written.index.parts.some((p) => p.name === next.name))
      throw new JobArchiveError(
        `${oldKey}: the shared index no longer names the part; the journal is left for the next run`,
      );
    await this.crash('index-switched');
    await this.finishSharedSwitch(shopId, month, part.name, head);
    if (repair) {
      this.archive.damagedBlocksDropped += repair.dropped.length;
      this.archive.damagedEntriesDropped += repair.entries;
    }
    if (r && key) {
      this.archive.partsRewritten.push({ old: oldKey, new: key, listings: r.removed });
      this.archive.listings += r.removed;
    }
  }

  /**
   * A shared part not stored as committed (its ETag changed): damaged when some blocks do not inflate.
   * `intact`: none of the damage is in the shop's segment (its blocks are rewritten, the others copied
   * byte for byte — damaged ones included, left to audit); `pending`: some is and dropDamaged was not
   * given (the redaction stays pending, naming the part; the document may be in a block nobody can
   * read); else the part less its damaged blocks, in memory (sharedPartWithoutDamage: `mid`, never
   * written as it is — the redaction is made on it and one part replaces the old). Otherwise (every
   * block inflates: the part was replaced) VerificationError, nothing rewritten.
   */
  private damagedShared(month: string, part: SharedPart, bytes: Uint8Array): 'intact' | 'pending' | Repair {
    const key = sharedPartKey(month, part.name);
    // A size that differs was refused before; anything damagedBlocks throws now is unexpected: it propagates.
    const damaged = damagedBlocks(bytes, part);
    if (damaged.length === 0)
      throw new VerificationError(
        key,
        'the stored shared part is not the one its shared index committed; nothing rewritten',
      );
    if (!damaged.some((o) => shopsOfBlock(part, o).includes(this.req.shopId))) return 'intact';
    if (!this.req.dropDamaged) return 'pending';
    const r = sharedPartWithoutDamage(bytes, part, newPartName(this.deps.clock()));
    const lost = new Set(r.dropped);
    let entries = 0;
    for (const shop of Object.keys(part.segments))
      for (const list of Object.values(this.sharedViews.get(month)?.get(shop)?.jobs ?? {}))
        for (const e of list)
          if (
            e.part === part.name &&
            (lost.has(e.offset) || (e.platform_data && lost.has(e.platform_data.offset)))
          )
            entries++;
    return {
      mid: r.part ? { ...r.part, etag: '', run_id: part.run_id, committed_at: part.committed_at } : null,
      bytes: r.bytes,
      moves: r.moves,
      dropped: r.dropped,
      entries,
    };
  }

  /** Deletes the old shared part once the shared index names the new one, then the journal. */
  private async finishSharedSwitch(
    shopId: string,
    month: string,
    oldName: string,
    head: HeadObjectCommandOutput | null,
  ) {
    const oldKey = sharedPartKey(month, oldName);
    const charge = head ? earlyDeletion(oldKey, head, this.deps.clock()) : null;
    await this.del(oldKey);
    if (charge) this.early.push(charge);
    await this.crash('old-part-deleted');
    await this.del(journalKey(shopId, month, oldName));
  }

  private async months(): Promise<string[]> {
    const out: string[] = [];
    for await (const o of listAll(this.deps.s3, this.deps.bucket, shopIndexPrefix(this.req.shopId))) {
      const m = parseMonthIndexKey(o.key);
      if (m) out.push(m.month);
    }
    return out.sort();
  }

  /** The shop's jobs with hot objects: every row of its partition, and archived entries not yet deleted. */
  private async redactHot(indexes: ReadonlyMap<string, MonthIndex>): Promise<void> {
    const jobIds = new Set<string>();
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.deps.ddb.send(
        new QueryCommand({
          TableName: this.deps.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': jobPk(this.req.shopId) },
          // The inline details of pre-migration rows (absent on every other row: nothing more is read).
          ProjectionExpression: ['job_id', ...Object.values(INLINE_DETAIL_ATTRIBUTES)].join(', '),
          ExclusiveStartKey: start,
        }),
      );
      for (const row of page.Items ?? []) {
        if (typeof row.job_id !== 'string') continue;
        jobIds.add(row.job_id);
        await this.redactInlineRow(row.job_id, row);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    for (const index of indexes.values())
      for (const [jobId, entries] of Object.entries(index.jobs))
        if (entries.some((e) => e.sources.length > 0)) jobIds.add(jobId);
    const store = new JobDetailsStore(this.deps.s3, this.deps.bucket);
    for (const jobId of [...jobIds].sort()) {
      const objects = (await store.listJobObjects(jobId)).filter((o) => o.kind === 'flush');
      if (objects.length > 0) this.hot.jobs++;
      for (const o of objects) {
        const n = await redactFlushObject(this.deps, o.key, { ...this.req, at: this.at });
        if (n === 0) continue;
        this.hot.objectsRewritten++;
        this.hot.listings += n;
        await this.crash('hot-object-rewritten');
      }
    }
  }

  /**
   * A pre-migration row listing the document in its inline details: the attributes that list it are
   * set to their redacted values, conditional on each still holding what was read (a writer that
   * changed it meanwhile fails the redaction, and a rerun reads it again). Only those attributes are
   * written; the row's counters stay (what the job processed).
   */
  private async redactInlineRow(jobId: string, row: Readonly<Record<string, unknown>>): Promise<void> {
    const r = redactRow(row, this.req.docId);
    if (r.removed === 0) return;
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const conditions: string[] = [];
    Object.entries(r.changed).forEach(([attribute, value], i) => {
      names[`#a${i}`] = attribute;
      values[`:n${i}`] = value;
      values[`:o${i}`] = row[attribute];
      sets.push(`#a${i} = :n${i}`);
      conditions.push(`#a${i} = :o${i}`);
    });
    await this.deps.ddb.send(
      new UpdateCommand({
        TableName: this.deps.table,
        Key: { pk: jobPk(this.req.shopId), sk: jobSk(jobId) },
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    this.rows.rewritten++;
    this.rows.listings += r.removed;
  }

  private async redactArchivedPart(month: string, part: IndexedPart): Promise<void> {
    const { shopId, docId } = this.req;
    this.archive.partsChecked++;
    const head = await this.head(part.key);
    if (!head) throw new CorruptObjectError(part.key, 'committed part is missing');
    const storageClass = head.StorageClass ?? 'STANDARD';
    if (NEEDS_RESTORE.has(storageClass) && !restored(head)) {
      this.pending.push({ key: part.key, storageClass, reason: await this.requestRestore(part.key, head) });
      return;
    }
    const got = await getObjectBytes(this.deps.s3, this.deps.bucket, part.key);
    if (!got) throw new CorruptObjectError(part.key, 'committed part is missing');
    if (got.size !== part.size || got.etag !== part.etag)
      throw new VerificationError(
        part.key,
        'the stored part is not the one its month index committed; nothing rewritten',
      );
    // The blocks; the filters member (the last, when the index names one) is rebuilt, not redacted.
    const members = partBlocks(got.bytes, part.key);
    const oldMembers = part.filters ? members.slice(0, -1) : members;
    if (part.filters && !isFiltersMember(members[members.length - 1] ?? Buffer.alloc(0)))
      throw new CorruptObjectError(part.key, 'the part does not end with its document filters member');
    const name = newPartName(this.deps.clock());
    const redacted = redactPart(oldMembers, { shopId, docId, at: this.at, where: part.key });
    if (redacted.removed === 0) return; // a filter's false match
    const key = partKey(shopId, month, name);
    const blocks = Buffer.concat(redacted.members);
    const tail = redacted.filters.blocks.length > 0 ? filtersMember(redacted.filters) : null;
    const body = tail ? Buffer.concat([blocks, tail]) : blocks;
    // 1–4: journal, new part, read-back, rollback age (writeRedacted); its filters, rebuilt from the
    // redacted records, are its last member.
    const { etag, at } = await this.writeRedacted(
      { shopId, month, old: part.name, new: name },
      key,
      body,
      sha256(body),
    );
    const sw = {
      oldName: part.name,
      oldMembers: oldMembers.map((m) => m.length),
      part: { name, key, size: body.length, etag },
      newMembers: redacted.members.map((m) => m.length),
      ...(tail ? { filters: { offset: blocks.length, length: tail.length } } : {}),
    };
    const written = await updateMonthIndex(this.deps, shopId, month, (current) => {
      const next = switchPart(current, sw, at);
      return { index: next, result: next !== null };
    });
    if (!written.result)
      throw new JobArchiveError(
        `${part.key}: the month index no longer names the part; the journal is left for the next run`,
      );
    await this.crash('index-switched');
    // 5. Only now, with the redacted copy verified and committed, the old part goes.
    await this.finishSwitch(shopId, month, part.name, head);
    this.archive.partsRewritten.push({ old: part.key, new: key, listings: redacted.removed });
    this.archive.listings += redacted.removed;
  }

  /** Deletes the old part once the index names the new part, then the journal. */
  private async finishSwitch(
    shopId: string,
    month: string,
    oldName: string,
    head: HeadObjectCommandOutput | null,
  ) {
    const oldKey = partKey(shopId, month, oldName);
    const charge = head ? earlyDeletion(oldKey, head, this.deps.clock()) : null;
    await this.del(oldKey);
    if (charge) this.early.push(charge);
    await this.crash('old-part-deleted');
    await this.del(journalKey(shopId, month, oldName));
  }

  private async requestRestore(key: string, head: HeadObjectCommandOutput): Promise<PendingPart['reason']> {
    if (restoring(head)) return 'restore-in-progress';
    try {
      await this.deps.s3.send(
        new RestoreObjectCommand({
          Bucket: this.deps.bucket,
          Key: key,
          RestoreRequest: {
            Days: this.deps.restoreDays,
            GlacierJobParameters: { Tier: this.deps.restoreTier },
          },
        }),
      );
      return 'restore-requested';
    } catch (err) {
      if ((err as { name?: string }).name === 'RestoreAlreadyInProgress') return 'restore-in-progress';
      throw err;
    }
  }

  /**
   * A rewrite an earlier run started. Index names the new part: verify it is the committed object,
   * then delete the old part and the journal. Index still names the old part: the new part was never
   * committed — once the journal is past its writer's deadline (rollbackDue), delete it (and its filters) and
   * the journal, and this run redoes the part; younger, the old part's key is returned (busy: left to
   * its run, reported pending). Neither: the run fails with everything left in place.
   */
  private async resolveJournal(key: string): Promise<string | null> {
    const j = (await getJson(this.deps, key, 'redaction journal')) as Journal | null;
    if (!j) return null;
    if (j.format !== REDACT_JOURNAL_FORMAT || j.shop_id !== this.req.shopId)
      throw new CorruptObjectError(key, `not a ${REDACT_JOURNAL_FORMAT} journal of ${this.req.shopId}`);
    if (j.shared) return this.resolveSharedJournal(key, j);
    const { index } = await loadMonthIndex(this.deps, j.shop_id, j.month);
    const committed = index.parts.find((p) => p.name === j.new);
    const oldKey = partKey(j.shop_id, j.month, j.old);
    const newKey = partKey(j.shop_id, j.month, j.new);
    if (committed) {
      const head = await this.head(newKey);
      if (!head || head.ContentLength !== committed.size || normalizeEtag(head.ETag) !== committed.etag)
        throw new VerificationError(
          newKey,
          'the committed redacted part does not match its index entry; old part kept',
        );
      await this.finishSwitch(j.shop_id, j.month, j.old, await this.head(oldKey));
    } else if (index.parts.some((p) => p.name === j.old)) {
      if (!rollbackDue(j, this.deps.clock())) return oldKey; // maybe still running: not ours to undo
      await this.del(newKey);
      await this.del(key);
    } else {
      // Neither part is committed (a lost index, a forgotten month): deleting either could lose the
      // only copy a reindex would rebuild from. Left in place, loudly.
      throw new JobArchiveError(
        `${key}: the month index names neither ${j.old} nor ${j.new}; both parts and the journal are left in place (reindex the month, then rerun)`,
      );
    }
    this.archive.journalsResolved++;
    return null;
  }

  /** resolveJournal for a shared part: the month's shared index in place of the month index. */
  private async resolveSharedJournal(key: string, j: Journal): Promise<string | null> {
    const { index } = await loadSharedIndex(this.deps, j.month);
    const committed = index.parts.find((p) => p.name === j.new);
    const oldKey = sharedPartKey(j.month, j.old);
    const newKey = sharedPartKey(j.month, j.new);
    if (committed) {
      const head = await this.head(newKey);
      if (!head || head.ContentLength !== committed.size || normalizeEtag(head.ETag) !== committed.etag)
        throw new VerificationError(
          newKey,
          'the committed redacted shared part does not match its shared index; old part kept',
        );
      await this.finishSharedSwitch(j.shop_id, j.month, j.old, await this.head(oldKey));
    } else if (index.parts.some((p) => p.name === j.old)) {
      if (!rollbackDue(j, this.deps.clock())) return oldKey;
      await this.del(newKey);
      await this.del(key);
    } else {
      throw new JobArchiveError(
        `${key}: the shared index of ${j.month} names neither ${j.old} nor ${j.new}; both parts and the journal are left in place`,
      );
    }
    this.archive.journalsResolved++;
    return null;
  }
}

export const redactDocument = (deps: RedactDeps, req: RedactRequest): Promise<RedactReport> =>
  new Redaction(deps, resolveRedactRequest(req)).run();
