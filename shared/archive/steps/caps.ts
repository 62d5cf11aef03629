import { errorText, truncate } from '../../text';

/** Caps that keep state payloads (256 KB) and reports bounded. */
export const CAPS = {
  /**
   * Quarantined jobs / delete errors a step returns as a sample (the complete lists go to findings
   * documents). The sample stays in the group's own execution: the Map's results carry counts only.
   */
  inline: 5,
  /** Quarantined jobs / failed groups listed in the execution output. */
  report: 100,
  /** Characters of a reason / error cause. */
  reason: 200,
} as const;

/** Why something failed, short enough for a state payload. */
export const reasonOf = (err: unknown): string => errorText(err, CAPS.reason);

/** Unsafe ids are reported, never used: JSON-quoted and shortened. */
export const reportableId = (v: unknown): string =>
  truncate(typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'), 100);
