import { createHash, type Hash } from 'node:crypto';
import type { JobDetails, JsonObject } from '../../details';
import { DETAILS_ROOT } from '../../details/keys';
import { BLOCK_BYTES, encodeBlock, encodeLine, platformDataRef } from './blocks';
import {
  type BlockFilter,
  filtersMember,
  type PartDocFilters,
  partDocFilters,
  RICE_BITS,
} from './doc-filter';
import { compactDetails } from './doc-lists';
import type { ByteRange, Located } from './month-index';
import {
  type ArchivedJobMeta,
  compactRow,
  compactSources,
  countDetails,
  metaDiff,
  type SourceObject,
} from './records';
import type { PendingPart } from './staging';
import { PART_FORMAT } from './version';

/**
 * Lays out a part (docs/archive-format.md, "Parts"): header, then for each job its platform-data record (first time the payload
 * is seen) and its job record, as JSONL lines packed into blocks — gzip members of about BLOCK_BYTES
 * uncompressed, so jobs compress together — and last, when any block lists a document, the blocks'
 * document filters as one more member (doc-filter.ts filtersMember). Emits each block through `sink` as it closes (the archive
 * step pipes them into a multipart upload) and keeps only locators and digests: memory is bounded by
 * one block plus one record.
 */
export class PartBuilder {
  private offset = 0;
  private readonly hash: Hash = createHash('sha256');
  /** Byte range of each closed block, by block number. */
  private readonly blocks: ByteRange[] = [];
  private open: Buffer[] = [];
  private openBytes = 0;
  /** Document ids listed by the open block's job records, and the filters of closed blocks listing any. */
  private openDocs = new Set<string>();
  private readonly filters: BlockFilter[] = [];
  private header: Pending | undefined;
  /**
   * Every platform-data record written (by ref), and — by content hash — those of the open block: a
   * payload is written once per block that has a job using it, so a job and its platform data are
   * always one ranged GET (a lookup reads one block).
   */
  private readonly platformData: Array<Pending & { ref: string; sha256: string }> = [];
  private blockPlatformData = new Map<string, Pending & { ref: string; sha256: string }>();
  private readonly jobs: Record<
    string,
    Omit<PendingPart['jobs'][string], 'offset' | 'length' | 'line'> & Pending
  > = {};
  private bytesIn = 0;
  private finished = false;

  constructor(
    private readonly meta: {
      shopId: string;
      month: string;
      partName: string;
      partKey: string;
      runId: string;
      createdAt: string;
      /** Job lines carry `shop_id` (a shared part's segment: docs/archive-format.md, "Shared parts"). */
      shopOnLines?: boolean;
      /** The blocks' gzip level (codec.ts); @default GZIP_LEVEL. A segment, never stored, takes SEGMENT_LEVEL. */
      level?: number;
      /**
       * Whether the blocks' document filters are built (and written as the last member); @default true.
       * A segment's are not: the batch rebuilds them for the shared part's own blocks (shared-blocks.ts).
       */
      filters?: boolean;
    },
    private readonly sink: (member: Buffer) => Promise<void>,
  ) {}

  /**
   * Adds a line to the open block. A block holds at most BLOCK_BYTES of lines unless one line alone
   * is longer (then it is a block of its own), so a lookup inflates at most that much beside its record.
   */
  private async append(line: Buffer, details?: JobDetails): Promise<Pending> {
    if (this.finished) throw new Error('PartBuilder: finished');
    if (this.openBytes > 0 && this.openBytes + line.length > BLOCK_BYTES) await this.closeBlock();
    const at: Pending = { block: this.blocks.length, line: { offset: this.openBytes, length: line.length } };
    if (details) addDocIds(this.openDocs, details);
    this.open.push(line);
    this.openBytes += line.length;
    if (this.openBytes >= BLOCK_BYTES) await this.closeBlock();
    return at;
  }

  private async closeBlock(): Promise<void> {
    if (this.open.length === 0) return;
    const member = Buffer.from(encodeBlock(Buffer.concat(this.open), this.meta.level));
    this.open = [];
    this.openBytes = 0;
    this.blockPlatformData = new Map();
    const range = { offset: this.offset, length: member.length };
    if (this.meta.filters !== false)
      this.filters.push(...partDocFilters([{ ...range, docs: this.openDocs }]).blocks);
    this.openDocs = new Set();
    this.blocks.push(range);
    this.offset += member.length;
    this.hash.update(member);
    await this.sink(member);
  }

  private located(p: Pending): Located {
    const b = this.blocks[p.block];
    if (!b) throw new Error(`PartBuilder: block ${p.block} is not closed`);
    return { offset: b.offset, length: b.length, line: p.line };
  }

  async writeHeader(): Promise<void> {
    const m = this.meta;
    const { line } = encodeLine({
      type: 'part',
      format: PART_FORMAT,
      shop_id: m.shopId,
      month: m.month,
      run_id: m.runId,
    });
    this.header = await this.append(line);
  }

  /** Appends one job; its platform data is written once per distinct payload per block. */
  async addJob(job: {
    jobId: string;
    meta: ArchivedJobMeta;
    details: JobDetails;
    platformData: unknown | null;
    sources: readonly SourceObject[];
    /** The whole row (null: expired before archival), see JobRecord. */
    row?: { row: JsonObject; reduced: Readonly<Record<string, number>> } | null;
    inline?: readonly string[];
  }): Promise<void> {
    if (!this.header) throw new Error('PartBuilder: writeHeader() first');
    const compact = job.row ? compactRow(job.row.row, this.meta.shopId, job.jobId) : null;
    // With the row kept, only what the row does not already say (shared/archive/records.ts).
    const meta = job.row ? metaDiff(job.meta, job.row.row) : job.meta;
    const hash =
      job.platformData !== null && job.platformData !== undefined ? platformDataRef(job.platformData) : null;
    // The job's lines: its platform data's (unless the open block has it) and its own.
    const lines = () => {
      const seen = hash === null ? undefined : this.blockPlatformData.get(hash);
      const ref = hash === null ? null : (seen?.ref ?? String(this.platformData.length + 1));
      const pd =
        ref === null || seen ? null : encodeLine({ type: 'platform_data', ref, data: job.platformData });
      const enc = encodeLine({
        type: 'job',
        ...(this.meta.shopOnLines ? { shop_id: this.meta.shopId } : {}),
        job_id: job.jobId,
        ...(Object.keys(meta).length > 0 ? { job: meta } : {}),
        details: compactDetails(job.details),
        ...(ref !== null ? { platform_data_ref: ref } : {}),
        sources: compactSources(`${DETAILS_ROOT}${job.jobId}/`, job.sources),
        ...(job.row !== undefined ? { row: compact?.row ?? null } : {}),
        ...(compact && compact.omitted.length > 0 ? { row_omitted: compact.omitted } : {}),
        ...(compact?.ttlAfter !== undefined ? { row_ttl_after: compact.ttlAfter } : {}),
        ...(job.row && Object.keys(job.row.reduced).length > 0 ? { row_reduced: job.row.reduced } : {}),
        ...(job.inline && job.inline.length > 0 ? { inline: job.inline } : {}),
      });
      return { ref, pd, enc, bytes: (pd?.line.length ?? 0) + enc.line.length };
    };
    let planned = lines();
    // Both in the open block, or both in the next one (where the payload is written again).
    if (this.openBytes > 0 && this.openBytes + planned.bytes > BLOCK_BYTES) {
      await this.closeBlock();
      planned = lines();
    }
    const { ref, pd, enc } = planned;
    if (pd && hash !== null && ref !== null) {
      const at = { ...(await this.append(pd.line)), ref, sha256: pd.sha256 };
      this.platformData.push(at);
      this.blockPlatformData.set(hash, at);
    }
    // A segment builds no filters (`filters: false`), so it collects no document ids for them.
    this.jobs[job.jobId] = {
      ...(await this.append(enc.line, this.meta.filters === false ? undefined : job.details)),
      sha256: enc.sha256,
      status: job.meta.status,
      completed_at: job.meta.completed_at,
      counts: countDetails(job.details),
      platform_data_ref: ref,
      sources: job.sources,
    };
    this.bytesIn += job.sources.reduce((n, s) => n + s.size, 0);
  }

  get jobCount(): number {
    return Object.keys(this.jobs).length;
  }

  /** Bytes emitted so far (the whole part once `finish` returned). */
  get size(): number {
    return this.offset;
  }

  /** The part's per-block document filters (its trailing member), once `finish` returned. */
  docFilters(): PartDocFilters {
    if (!this.finished) throw new Error('PartBuilder: finish() first');
    return { k: RICE_BITS, blocks: this.filters };
  }

  /** Closes the last block and returns the staging manifest verify checks the stored part against. */
  async finish(): Promise<PendingPart> {
    if (!this.header) throw new Error('PartBuilder: nothing written');
    await this.closeBlock();
    this.finished = true;
    // The document filters: the part's last member, in its class (doc-filter.ts filtersMember).
    let filters: ByteRange | undefined;
    if (this.filters.length > 0) {
      const member = filtersMember(this.docFilters());
      filters = { offset: this.offset, length: member.length };
      this.offset += member.length;
      this.hash.update(member);
      await this.sink(member);
    }
    const m = this.meta;
    return {
      shop_id: m.shopId,
      month: m.month,
      part: m.partName,
      part_key: m.partKey,
      run_id: m.runId,
      created_at: m.createdAt,
      size: this.offset,
      sha256: this.hash.digest('hex'),
      bytes_in: this.bytesIn,
      header: this.located(this.header),
      platform_data: Object.fromEntries(
        this.platformData.map(({ ref, sha256, ...p }) => [ref, { ...this.located(p), sha256 }]),
      ),
      jobs: Object.fromEntries(
        Object.entries(this.jobs).map(([id, { block, line, ...e }]) => [
          id,
          { ...e, ...this.located({ block, line }) },
        ]),
      ),
      // None built (a segment): none staged, so verify checks none against the segment's own blocks.
      ...(this.meta.filters !== false ? { doc_filters: this.docFilters() } : {}),
      ...(filters ? { filters } : {}),
    };
  }
}

/**
 * Adds the document ids a job's details list (flatten.ts documentListings' ids, without a listing
 * object per id: a block's filter needs the ids alone).
 */
const addDocIds = (docs: Set<string>, details: JobDetails): void => {
  for (const reason of Object.keys(details.failed))
    for (const id of details.failed[reason] as readonly string[]) docs.add(id);
  for (const reason of Object.keys(details.skipped))
    for (const id of details.skipped[reason] as readonly string[]) docs.add(id);
  for (const reason of Object.keys(details.conflict))
    for (const item of details.conflict[reason] as readonly { doc_id: string }[]) docs.add(item.doc_id);
};

/** A record's place before its block is closed: block number and line inside the block. */
interface Pending {
  readonly block: number;
  readonly line: ByteRange;
}

/**
 * Cuts a byte stream into the members at the given ranges (sorted, contiguous from 0). Pure: verify
 * feeds it the part's GET stream chunk by chunk and holds at most one member in memory.
 */
export class BlockSlicer {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private position = 0;
  private next = 0;

  constructor(private readonly ranges: readonly (ByteRange & { id: string })[]) {}

  /** Returns the members completed by this chunk, in order. */
  push(chunk: Buffer): Array<{ id: string; bytes: Buffer }> {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    const out: Array<{ id: string; bytes: Buffer }> = [];
    for (;;) {
      const r = this.ranges[this.next];
      if (!r || this.position + this.bufferedBytes < r.offset + r.length) break;
      const all = Buffer.concat(this.buffered);
      const start = r.offset - this.position;
      out.push({ id: r.id, bytes: all.subarray(start, start + r.length) });
      const rest = all.subarray(start + r.length);
      this.position = r.offset + r.length;
      this.buffered = rest.length ? [rest] : [];
      this.bufferedBytes = rest.length;
      this.next++;
    }
    return out;
  }

  /** True when every range was produced and no stray bytes follow. */
  get complete(): boolean {
    return this.next === this.ranges.length && this.bufferedBytes === 0;
  }

  /** Ranges must tile [0, total) exactly: no gap, no overlap. Returns a reason when they don't. */
  static tilingProblem(ranges: readonly ByteRange[], total: number): string | null {
    let at = 0;
    for (const r of ranges) {
      if (r.offset !== at) return `expected a member at byte ${at}, found one at ${r.offset}`;
      if (r.length <= 0) return `empty member at byte ${r.offset}`;
      at = r.offset + r.length;
    }
    return at === total ? null : `members end at byte ${at} but the part has ${total}`;
  }
}
