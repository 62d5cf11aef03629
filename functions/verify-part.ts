import { parseVerifyEvent } from '../shared/archive/steps/events';
import type { VerifyResult } from '../shared/archive/steps/types';
import { verifyPart } from '../shared/archive/steps/verify-part';
import { getDeps } from './deps';

/** `VerifyPart` Task: `{run, group, archive}` → `$.verify`; a mismatch throws VerificationError. */
export const handler = async (event: unknown): Promise<VerifyResult> =>
  verifyPart(getDeps(), parseVerifyEvent(event));
