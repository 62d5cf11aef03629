import { createHash } from 'node:crypto';
import { GetObjectCommand, type GetObjectCommandOutput } from '@aws-sdk/client-s3';
import { CorruptObjectError, InvalidInputError, VerificationError } from '../../../errors';
import { isNotFound, normalizeEtag } from '../../../s3/objects';
import { BlockSlicer, inflateBlock, partKey, pendingKey, type VerifiedPart } from '../../format';
import type { StagedPart } from '../archive/staged';
import type { StepDeps } from '../context';
import type { PlannedJob, VerifyInput, VerifyResult } from '../types';
import {
  checkedBlockDocs,
  FILTERS_MEMBER,
  filterProblem,
  filtersMemberProblem,
  linesProblem,
  partBlocks,
  planProblem,
  toVerifiedPart,
} from './verify-checks';

/** The part and intent keys of an archive result, re-derived so a stage never trusts a passed-in key. */
export const stagedKeys = (event: VerifyInput): { name: string; part: string; pending: string } => {
  const { group, archive } = event;
  if (archive.partName === undefined || archive.partKey === undefined) {
    throw new InvalidInputError('archive.partKey', 'no part to verify or commit');
  }
  const part = partKey(group.shopId, group.month, archive.partName);
  const pending = pendingKey(group.shopId, group.month, archive.partName);
  if (archive.partKey !== part) throw new InvalidInputError('archive.partKey', `expected ${part}`);
  if (archive.pendingKey !== undefined && archive.pendingKey !== pending) {
    throw new InvalidInputError('archive.pendingKey', `expected ${pending}`);
  }
  return { name: archive.partName, part, pending };
};

/**
 * A group's verify stage: re-reads the stored part as a stream and proves it is what `staged` (the
 * manifest the archive stage handed over) says — members tile the object, every member decompresses
 * ALONE into the expected record with the expected digest, each job's sources are exactly what was
 * read, and size, sha256 and ETag match — then returns the VerifiedPart commit adds. Any mismatch
 * throws VerificationError: the part is never committed.
 */
export const verifyPart = async (
  deps: StepDeps,
  event: VerifyInput,
  plannedJobs: readonly PlannedJob[],
  staged: StagedPart,
): Promise<{ result: VerifyResult; verified: VerifiedPart }> => {
  const { run, group, archive } = event;
  let verifiedOut: VerifiedPart | undefined;
  const keys = stagedKeys(event);
  const fail = (reason: string): never => {
    throw new VerificationError(keys.part, reason);
  };
  const { value: jobs, requests } = await deps.meter.measure(async () => {
    const m = staged;
    if (
      m.shop_id !== group.shopId ||
      m.month !== group.month ||
      m.part !== keys.name ||
      m.part_key !== keys.part
    ) {
      fail('manifest describes another part');
    }
    if (m.run_id !== run.runId) fail(`manifest belongs to run ${m.run_id}`);
    const badPlan = planProblem(m, plannedJobs, archive.summary.archived);
    if (badPlan) fail(badPlan);

    const ranges = partBlocks(m);
    const tiling = BlockSlicer.tilingProblem(ranges, m.size);
    if (tiling) fail(tiling);

    let out: GetObjectCommandOutput | undefined;
    try {
      out = await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: keys.part }));
    } catch (err) {
      if (isNotFound(err)) fail('part object is missing');
      throw err;
    }
    if (!out?.Body) return fail('part has no body');
    if (normalizeEtag(out.ETag) !== m.etag)
      fail(`ETag ${normalizeEtag(out.ETag)} is not the uploaded ${m.etag}`);
    if (out.ContentLength !== undefined && out.ContentLength !== m.size)
      fail(`size ${out.ContentLength} is not ${m.size}`);

    const stream = out.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
    try {
      await checkPartBytes(m, keys.part, stream, fail);
    } catch (err) {
      // Stopping early: release the connection rather than leave the body half read.
      stream.destroy?.();
      throw err;
    }

    const verified = toVerifiedPart(m);
    verifiedOut = verified;
    return verified.part.job_count;
  });
  if (!verifiedOut) throw new VerificationError(keys.part, 'verification did not complete');
  return { result: { verified: true, jobs, requests }, verified: verifiedOut };
};

/**
 * The stored bytes of a part (or of one segment of a shared part) against its manifest: members tile
 * it, every member decompresses ALONE into the expected records with the expected digests, and size
 * and sha256 match. Throws through `fail` at the first mismatch.
 *
 * `records: false` (a packed segment as built, whose records pack-month decodes and checks where the
 * shared part stores them: verify-shared.ts `relocatedManifest`) checks the framing alone — members
 * tile it, each inflates alone, the manifest's lines tile each block (no line it does not name),
 * size and sha256 — so that no record is decoded twice. A manifest with document filters is always
 * checked whole (its filters are checked against the decoded records).
 */
export const checkPartBytes = async (
  m: StagedPart,
  key: string,
  stream: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  fail: (reason: string) => never,
  { records = true }: { readonly records?: boolean } = {},
): Promise<void> => {
  const decode = records || m.doc_filters !== undefined;
  const ranges = partBlocks(m);
  const byId = new Map(ranges.map((r) => [r.id, r]));
  // Document filters (when staged) are checked against each block's stored records.
  const filters = m.doc_filters ? new Map(m.doc_filters.blocks.map((b) => [b.offset, b])) : null;
  const slicer = new BlockSlicer(ranges);
  const hash = createHash('sha256');
  let total = 0;
  for await (const chunk of stream) {
    const buf = Buffer.from(chunk);
    total += buf.length;
    if (total > m.size) fail(`more than ${m.size} bytes`);
    hash.update(buf);
    for (const member of slicer.push(buf)) {
      const range = byId.get(member.id);
      if (!range) return fail(`unexpected member ${member.id}`);
      if (member.id === FILTERS_MEMBER) {
        const bad = filtersMemberProblem(m, member.bytes, `${key}@${range.offset}`);
        if (bad) fail(bad);
        continue;
      }
      // Each block inflates alone, its lines tile it exactly, and each line is the expected record.
      const where = `${key}@${range.offset}`;
      let inflated: Buffer;
      try {
        inflated = inflateBlock(member.bytes, where);
      } catch (err) {
        if (err instanceof CorruptObjectError) fail(`${member.id}: ${err.reason}`);
        throw err;
      }
      const tiles = linesProblem(range, inflated.length, range.offset === 0);
      if (tiles) fail(tiles);
      if (!decode) continue;
      const docs = checkedBlockDocs(m, inflated, range.lines, where, fail);
      if (filters) {
        const bad = filterProblem(filters.get(range.offset), range, docs);
        if (bad) fail(bad);
        filters.delete(range.offset);
      }
    }
  }
  if (total !== m.size) fail(`read ${total} bytes, expected ${m.size}`);
  if (!slicer.complete) fail('not every member was found');
  if (filters && filters.size > 0) fail(`a document filter for no block (at ${[...filters.keys()][0]})`);
  if (hash.digest('hex') !== m.sha256) fail('sha256 of the part differs from the manifest');
};
