import { InvalidInputError, VerificationError } from '../../../errors';
import { applyCommit, type MonthIndex, type VerifiedPart } from '../../format';
import { settledArchivals } from '../archive/settled-archivals';
import type { StepDeps } from '../context';
import type { CommitInput, CommitResult } from '../types';
import { stagedKeys } from '../verify/verify-part';
import { INDEX_WRITE_ATTEMPTS, type LoadedIndex, updateMonthIndex } from './index-store';

/** The index holds parts settled since the records of its settled parts were last read (commitPartStep). */
class SettledSince extends Error {
  constructor(readonly index: MonthIndex) {
    super('parts settled since');
  }
}

/**
 * What the verify stage handed over: the VerifiedPart (it read the whole part back a moment ago, so
 * the part is not HEADed again) and the index the archive stage read (its ETag guards the write).
 */
export interface CommitHandoff {
  readonly verified: VerifiedPart;
  readonly index: LoadedIndex;
  /** Jobs the part archives again → the part of the entry each follows (applyCommit). */
  readonly rearchived?: ReadonlyMap<string, string>;
  /** Runs just before the index write and may refuse it (a shop forgotten meanwhile: docs/erasure.md). */
  readonly guard?: () => Promise<void>;
}

/**
 * A group's commit stage: adds the verified part to the month index with a conditional
 * read-modify-write (the part becomes visible to readers here). Its intent doc is returned in
 * `staging` for the caller to delete with the rest of its batch.
 */
export const commitPartStep = async (
  deps: StepDeps,
  event: CommitInput,
  known: CommitHandoff,
): Promise<{ result: CommitResult; index: LoadedIndex; staging: string[] }> => {
  const { run, group } = event;
  if (run.dryRun) throw new InvalidInputError('run.dryRun', 'a dry run commits nothing');
  const keys = stagedKeys(event);
  let after: LoadedIndex | undefined;
  const { value: jobs, requests } = await deps.meter.measure(async () => {
    const { verified } = known;
    if (
      verified.part.name !== keys.name ||
      verified.part.key !== keys.part ||
      verified.part.run_id !== run.runId
    ) {
      throw new VerificationError(keys.part, 'verified manifest describes another part or run');
    }
    await known.guard?.();
    const at = deps.clock().toISOString();
    // Parts the archive stage classified against (settled in the index it read) need no second look.
    // A part an overlapping run settled since holds its own records of some of these jobs, perhaps of
    // the same completions: those are read (one ranged GET a block) before the write, so this part
    // adds no second archival of them (applyCommit `settled`).
    const before = new Set(known.index.index.parts.filter((p) => p.settled).map((p) => p.name));
    const consulted = new Set(before);
    const ids = Object.keys(verified.jobs);
    let settled = new Map<string, { part: string; completed_at: string }>();
    // The index the archive stage read guards the first write; after a part settled since, a fresh one.
    let start: LoadedIndex | undefined = known.index;
    for (let attempt = 1; ; attempt++) {
      try {
        const written = await updateMonthIndex(
          deps,
          group.shopId,
          group.month,
          (current) => {
            if (current.parts.some((p) => p.settled && !consulted.has(p.name)))
              throw new SettledSince(current);
            const c = applyCommit(current, verified, at, known?.rearchived, settled);
            return { index: c.index, result: c.added };
          },
          undefined,
          start,
        );
        after = { index: written.index, etag: written.etag };
        return written.result;
      } catch (err) {
        if (!(err instanceof SettledSince) || attempt > INDEX_WRITE_ATTEMPTS) throw err;
        start = undefined;
        for (const p of err.index.parts) if (p.settled) consulted.add(p.name);
        settled = new Map(
          [...(await settledArchivals(deps, err.index, ids))].flatMap(([id, a]) =>
            // Only parts settled since: one settled before was the archive stage's to judge (a job
            // archived again past it, its prefix holding objects again, must get its entry).
            a.kind === 'record' && !before.has(a.part)
              ? [[id, { part: a.part, completed_at: a.completed_at }] as const]
              : [],
          ),
        );
      }
    }
  });
  if (!after) throw new VerificationError(keys.part, 'the month index was not read');
  return {
    result: { committed: true, part: keys.name, jobs, requests },
    index: after,
    staging: [keys.pending],
  };
};
