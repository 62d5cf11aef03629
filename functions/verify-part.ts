import { parseVerifyEvent } from '../shared/archive/steps/events';
import type { VerifyResult } from '../shared/archive/steps/types';
import { verifyPart } from '../shared/archive/steps/verify-part';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `VerifyPart` Task: `{run, group, archive}` → `$.verify`; a mismatch throws VerificationError. */
export const handler = withBoundedErrors(
  async (event): Promise<VerifyResult> => verifyPart(getDeps(), parseVerifyEvent(event)),
);
