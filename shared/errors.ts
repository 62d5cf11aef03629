/**
 * Every error this package throws on purpose. Names are stable: Step Functions Retry/Catch and
 * callers match on `name`, so never rename one.
 */
export class JobArchiveError extends Error {
  override readonly name: string = 'JobArchiveError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An id (job, shop, flush, chunk) that must not become part of an S3 key or a DynamoDB key. */
export class InvalidIdError extends JobArchiveError {
  override readonly name = 'InvalidIdError';
  constructor(
    readonly kind: string,
    readonly value: unknown,
    readonly reason: string,
  ) {
    super(`invalid ${kind} ${JSON.stringify(value)}: ${reason}`);
  }
}

/** Input of the wrong shape (payload, handler event, CLI argument, construct prop). */
export class InvalidInputError extends JobArchiveError {
  override readonly name = 'InvalidInputError';
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`invalid ${field}: ${reason}`);
  }
}

/** An object read back from S3 that is not what we wrote (bad gzip, bad JSON, wrong shape, empty). */
export class CorruptObjectError extends JobArchiveError {
  override readonly name = 'CorruptObjectError';
  constructor(
    readonly key: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`corrupt object ${key}: ${reason}`, options);
  }
}

/**
 * An archive object in a format this release does not read: written by a pre-1.0 build (the package
 * was never published; only local stacks can hold one), or by a newer major version. One line naming
 * the fix; never read as something else.
 */
export class UnsupportedFormatError extends JobArchiveError {
  override readonly name = 'UnsupportedFormatError';
  constructor(
    readonly key: string,
    readonly format: string,
    readonly fix: string,
  ) {
    super(`${key} is in format ${format}: ${fix}`);
  }
}

/** A required setting is missing or malformed. */
export class ConfigError extends JobArchiveError {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`config ${variable}: ${reason}`);
  }
}

/**
 * The jobs table's TTL would delete rows before the archiver reaches them: a job whose row is gone
 * is no longer planned, so its hot objects would stay hot. Names every value of the sum.
 */
export class TtlTooShortError extends JobArchiveError {
  override readonly name = 'TtlTooShortError';
  readonly field = 'jobTtlDays';
  constructor(
    readonly jobTtlDays: number,
    readonly neededDays: number,
    readonly terms: Readonly<Record<string, number>>,
  ) {
    const sum = Object.entries(terms)
      .map(([k, v]) => `${k} ${v}`)
      .join(' + ');
    super(
      `invalid jobTtlDays: ${jobTtlDays} days is too short: rows must outlive archival so the plan can still find them — ${sum} = ${neededDays} days must be below jobTtlDays`,
    );
  }
}

/** The job row does not exist (flush for an unknown job, lookup of a missing row). */
export class JobNotFoundError extends JobArchiveError {
  override readonly name = 'JobNotFoundError';
  constructor(
    readonly shopId: string,
    readonly jobId: string,
  ) {
    super(`job ${jobId} of shop ${shopId} not found`);
  }
}

/**
 * A part its month index names is gone and older than the retention horizon: the lifecycle rule
 * expired it (indexes expire a month after their parts). Expected, not damage.
 */
export class ArchiveExpiredError extends JobArchiveError {
  override readonly name = 'ArchiveExpiredError';
  constructor(
    readonly key: string,
    readonly retentionMonths: number,
    readonly writtenAt: string,
  ) {
    super(`archive ${key} (written ${writtenAt}) expired: it is past the ${retentionMonths}-month retention`);
  }
}

/** A part read back does not match what was planned; the part is not committed. */
export class VerificationError extends JobArchiveError {
  override readonly name = 'VerificationError';
  constructor(
    readonly partKey: string,
    readonly reason: string,
  ) {
    super(`verification of ${partKey} failed: ${reason}`);
  }
}

/** Someone else changed an object we were rewriting conditionally (S3 412 / DynamoDB condition). */
export class ConcurrentModificationError extends JobArchiveError {
  override readonly name = 'ConcurrentModificationError';
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`concurrent modification of ${key}`, options);
  }
}

/**
 * Reading an object failed without an answer from S3 (the response cut off mid-body, a reset
 * connection) while the object is still there: named with the object, instead of Node's bare
 * "Error: aborted". The shop-month fails and keeps its hot data; the next run reads it again.
 */
export class SourceReadError extends JobArchiveError {
  override readonly name = 'SourceReadError';
  constructor(
    readonly key: string,
    cause: unknown,
  ) {
    super(
      `reading ${key} failed without an answer from S3 (${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}); the object is still there`,
      { cause },
    );
  }
}

/** An archived part is in a Glacier class that needs a restore; a restore has been requested. */
export class ArchiveNotRestoredError extends JobArchiveError {
  override readonly name = 'ArchiveNotRestoredError';
  constructor(
    readonly key: string,
    readonly restoreTier: string,
    readonly restoreRequested: boolean,
  ) {
    super(
      `archive ${key} is in cold storage; ${restoreRequested ? `restore (${restoreTier}) requested` : 'restore already in progress'} — retry later`,
    );
  }
}

/** A rebuilt month index would overwrite an existing one and the caller did not force it. */
export class IndexExistsError extends JobArchiveError {
  override readonly name = 'IndexExistsError';
  constructor(readonly key: string) {
    super(`month index ${key} exists; pass --force to overwrite it with the rebuilt one`);
  }
}

/**
 * A shop-month packed into its month's shared part (docs/archive-format.md, "Shared parts"): an index
 * of its own would hide its shared view from readers, so reindex refuses to write one.
 */
export class PackedShopMonthError extends JobArchiveError {
  override readonly name = 'PackedShopMonthError';
  constructor(
    readonly shopId: string,
    readonly month: string,
    readonly key: string,
  ) {
    super(
      `${shopId} ${month} is packed in ${key}: its records are in shared parts, which reindex does not rebuild`,
    );
  }
}

export const isNamedError = (err: unknown, name: string): boolean =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;

/**
 * A shop-month has committed parts (no staging doc names them) but no month index: the index was lost.
 * The archiver refuses the group — archiving against an empty index would commit empty records for
 * jobs whose hot copies are already gone — until `jobarchive reindex` rebuilds it from the parts.
 */
export class LostIndexError extends JobArchiveError {
  override readonly name = 'LostIndexError';
  constructor(
    readonly key: string,
    readonly shopId: string,
    readonly month: string,
    readonly parts: readonly string[],
  ) {
    super(
      `month index ${key} is missing but ${parts.length} committed part(s) exist (${parts.slice(0, 3).join(', ')}${parts.length > 3 ? ', …' : ''}); nothing archived or deleted — rebuild it: jobarchive reindex --shop ${shopId} --month ${month}`,
    );
  }
}

/**
 * A shop-month's part was built while the shop was being forgotten (its tombstone appeared between the
 * archive and the commit): the part is removed, never committed, and the group fails so its other jobs
 * (completed after the forget, if any) are retried.
 */
export class ShopForgottenError extends JobArchiveError {
  override readonly name = 'ShopForgottenError';
  constructor(
    readonly shopId: string,
    readonly forgottenAt: string,
  ) {
    super(
      `shop ${shopId} was forgotten (erasure received ${forgottenAt}) while this group was being archived: its part was removed, not committed`,
    );
  }
}

/** An erasure could not remove everything (objects it could not delete, data that kept reappearing). */
export class ErasureIncompleteError extends JobArchiveError {
  override readonly name = 'ErasureIncompleteError';
  constructor(
    readonly requestId: string,
    readonly reason: string,
  ) {
    super(`erasure request ${requestId} is not complete: ${reason}; run it again`);
  }
}

/**
 * The JavaScript runtime lacks what the package needs: numbers keep their exact text through
 * `JSON.rawJSON` / `JSON.isRawJSON` (Node.js ≥ 22). Thrown when the writer or reader is imported,
 * before anything is written.
 */
export class UnsupportedRuntimeError extends JobArchiveError {
  override readonly name = 'UnsupportedRuntimeError';
  constructor(
    readonly required: string,
    readonly found: string,
    readonly missing: readonly string[],
  ) {
    super(
      `job-details-archive needs ${required} (this is ${found}, without ${missing.join(' and ')}): run it on Node.js 22 or newer`,
    );
  }
}
