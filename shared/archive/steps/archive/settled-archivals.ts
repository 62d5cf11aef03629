import type { S3Client } from '@aws-sdk/client-s3';
import { CorruptObjectError, isNamedError, VerificationError } from '../../../errors';
import { getObjectBytes } from '../../../s3/objects';
import {
  blockRecords,
  latestEntry,
  type MonthIndex,
  monthIndexKey,
  type SettledCandidate,
  settledCandidates,
  settledEntry,
} from '../../format';

/**
 * What a settled part says of a job that has no entry left in the month index (its entries became
 * the part's summary when it settled, month-index-settle.ts): the archival its record holds, or that
 * the record could not be read without a restore.
 * - `record`: the part holds the job's record, of completion `completed_at` (the record's own);
 * - `unread`: a part whose directory names a block that may hold the job is in a restore class
 *   (InvalidObjectState): nothing is known, and nothing may be concluded from its directory alone.
 */
export type SettledArchival =
  | {
      readonly kind: 'record';
      readonly part: string;
      readonly run_id: string;
      readonly completed_at: string;
    }
  | { readonly kind: 'unread'; readonly part: string };

/**
 * For each of `jobIds` with a settled part whose block directory covers it, committed after the job's
 * latest entry (any, when it has none): the newest archival those settled parts hold (parts' commit
 * order), `unread` when any such part could not be read (a restore class). One ranged GET per block named, shared by the jobs it may
 * hold; only jobs the plan handed again to a month whose parts settled get here (retries, late rows,
 * overlapping runs). A part that is missing, whose block does not inflate, is shorter than its
 * directory says or holds a job outside its directory's range (as lookup checks: settledEntry) fails
 * the group (VerificationError / CorruptObjectError), as any damaged committed part does; with
 * `damaged`, it is handed there instead (audit names it) and that block's jobs get no answer.
 */
export const settledArchivals = async (
  deps: { readonly s3: S3Client; readonly bucket: string },
  index: MonthIndex,
  jobIds: Iterable<string>,
  damaged?: (err: VerificationError | CorruptObjectError, part: string) => void,
): Promise<Map<string, SettledArchival>> => {
  // Block (part key @ offset) → the candidate reads it answers.
  interface BlockRead {
    key: string;
    part: string;
    run_id: string;
    range: { offset: number; length: number };
    candidate: SettledCandidate;
    jobs: string[];
  }
  const indexKey = monthIndexKey(index.shop_id, index.month);
  const reads = new Map<string, BlockRead>();
  const order = new Map<string, number>(index.parts.map((p, i) => [p.name, i]));
  for (const jobId of jobIds) {
    // Only settled parts committed after the job's latest entry (if it has one) can hold a newer
    // archival: a job retried between its archival and its delete keeps that older entry undeleted
    // (the delete skips it, so its part never settles) while its newer part settles.
    const latest = latestEntry(index, jobId);
    const after = latest === undefined ? -1 : (order.get(latest.part) ?? -1);
    for (const c of settledCandidates(index, jobId)) {
      if ((order.get(c.part.name) ?? -1) <= after) continue;
      const at = `${c.part.key}@${c.range.offset}`;
      const r: BlockRead = reads.get(at) ?? {
        key: c.part.key,
        part: c.part.name,
        run_id: c.part.run_id,
        range: c.range,
        candidate: c,
        jobs: [],
      };
      r.jobs.push(jobId);
      reads.set(at, r);
    }
  }
  const found = new Map<string, SettledArchival[]>();
  const add = (jobId: string, a: SettledArchival) => found.set(jobId, [...(found.get(jobId) ?? []), a]);
  for (const r of reads.values()) {
    let got: Awaited<ReturnType<typeof getObjectBytes>> = null;
    let outside: unknown;
    try {
      got = await getObjectBytes(deps.s3, deps.bucket, r.key, r.range);
    } catch (err) {
      // 416: the directory's block lies past the part's end (damage, as lookup names it).
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416)
        outside = err;
      else if (!isNamedError(err, 'InvalidObjectState')) throw err;
      else {
        for (const jobId of r.jobs) add(jobId, { kind: 'unread', part: r.part });
        continue;
      }
    }
    const where = `${r.key} bytes ${r.range.offset}-${r.range.offset + r.range.length - 1}`;
    try {
      if (outside !== undefined)
        throw new CorruptObjectError(where, 'range lies outside the part', { cause: outside });
      if (!got) throw new VerificationError(r.key, 'a settled part of the month index is missing');
      if (got.bytes.length !== r.range.length)
        throw new CorruptObjectError(
          where,
          `expected ${r.range.length} bytes, got ${got.bytes.length} (part shorter than its index says)`,
        );
      // Every record of the block, so a job outside the directory's range is named as damage.
      const records = blockRecords(got.bytes, where, index.shop_id);
      for (const jobId of r.jobs) {
        const e = settledEntry(r.candidate, records, jobId, indexKey);
        if (e) add(jobId, { kind: 'record', part: r.part, run_id: r.run_id, completed_at: e.completed_at });
      }
    } catch (err) {
      if (!damaged || !(err instanceof VerificationError || err instanceof CorruptObjectError)) throw err;
      damaged(err, r.part);
    }
  }
  const out = new Map<string, SettledArchival>();
  for (const [jobId, list] of found) {
    const unread = list.find((a) => a.kind === 'unread');
    const newest = [...list].sort((a, b) => (order.get(a.part) ?? 0) - (order.get(b.part) ?? 0)).pop();
    const chosen = unread ?? newest;
    if (chosen) out.set(jobId, chosen);
  }
  return out;
};
