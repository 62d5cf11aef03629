import {
  BlockScanner,
  canonicalJson,
  compactDetails,
  countDetails,
  type DetailCounts,
  deflateBlock,
  documentListings,
  expandDetails,
  inflateBlock,
  type PartDocFilters,
  partDocFilters,
} from '../archive/format';
import { parseJsonExact } from '../details/json';
import { parseJobDetailsPayload } from '../details/payload';
import { CorruptObjectError } from '../errors';
import { redactDetails } from './redact-details';

/**
 * Pure byte logic of redacting a part: the part's gzip members (blocks) in order → the same number
 * of members, each either the old bytes verbatim (nothing of the document in it) or its lines with
 * the document removed from the job records of `shopId` that list it, re-gzipped. Every other line
 * keeps its bytes (re-serialized only when changed: records are canonical JSON, parsed exactly), so
 * block numbers, platform-data refs and every other job's record are what they were. The filters are
 * rebuilt from the redacted records, so the document is gone from them too.
 */
export interface RedactedPart {
  /** The new part's members, in the old order (one per old member). */
  readonly members: readonly Buffer[];
  /** Listings removed, over the whole part. */
  readonly removed: number;
  /** Jobs redacted → their new detail counts (the records'). */
  readonly jobs: ReadonlyMap<string, DetailCounts>;
  /** The new part's per-block document filters (the new part's filters member). */
  readonly filters: PartDocFilters;
  readonly size: number;
}

/** Splits a whole part into its gzip members (any part format). */
export const partBlocks = (bytes: Buffer, where: string): Buffer[] => {
  const scan = new BlockScanner(bytes.length + 1);
  try {
    return [...scan.push(bytes), ...scan.finish()].map((m) => Buffer.from(m.bytes));
  } catch (err) {
    throw new CorruptObjectError(where, (err as Error).message, { cause: err });
  }
};

type Obj = Record<string, unknown>;

export const redactPart = (
  members: readonly Buffer[],
  ctx: { shopId: string; docId: string; at: string; where: string },
): RedactedPart => {
  const out: Buffer[] = [];
  const jobs = new Map<string, DetailCounts>();
  const blocks: { offset: number; length: number; docs: Set<string> }[] = [];
  let removed = 0;
  let headerShop: string | undefined;
  let offset = 0;
  for (const [b, member] of members.entries()) {
    const where = `${ctx.where} block ${b}`;
    const lines = inflateBlock(member, where).toString('utf8').split('\n');
    const last = lines.pop();
    if (last !== '') throw new CorruptObjectError(where, 'block does not end with a newline');
    const docs = new Set<string>();
    let changed = false;
    const next = lines.map((line, i) => {
      const rec = parseJsonExact(line, `${where} line ${i + 1}`) as Obj;
      if (rec.type === 'part' && typeof rec.shop_id === 'string') headerShop = rec.shop_id;
      if (rec.type !== 'job') return line;
      const details = parseJobDetailsPayload(
        expandDetails(rec.details, `${where} line ${i + 1}`),
        `${where} line ${i + 1}`,
      );
      const shop = typeof rec.shop_id === 'string' ? rec.shop_id : headerShop;
      const r = shop === ctx.shopId ? redactDetails(details, ctx.docId, ctx.at) : { details, removed: 0 };
      // A shared part's block may hold other shops' lines: the filters are this shop's (its view's).
      if (shop === ctx.shopId) for (const l of documentListings(r.details)) docs.add(l.doc_id);
      if (r.removed === 0) return line;
      changed = true;
      removed += r.removed;
      jobs.set(String(rec.job_id), countDetails(r.details));
      return canonicalJson({ ...rec, details: compactDetails(r.details) });
    });
    const bytes = changed ? deflateBlock(Buffer.from(`${next.join('\n')}\n`, 'utf8')) : member;
    out.push(bytes);
    blocks.push({ offset, length: bytes.length, docs });
    offset += bytes.length;
  }
  return {
    members: out,
    removed,
    jobs,
    filters: partDocFilters(blocks),
    size: offset,
  };
};
