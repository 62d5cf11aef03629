import { JobArchiveError } from '../../shared/errors';

/**
 * Errors of the local tools (the embedded stack and the local state-machine runner), not of the
 * library: they extend its JobArchiveError so callers catch one tree, but live beside the tools.
 */
/** The local stack could not start (Java missing, port busy, emulator died). */
export class LocalStackError extends JobArchiveError {
  override readonly name = 'LocalStackError';
}

/** A state machine definition uses a feature the local interpreter cannot run faithfully. */
export class UnsupportedLocallyError extends JobArchiveError {
  override readonly name = 'UnsupportedLocallyError';
  constructor(
    readonly statePath: string,
    readonly feature: string,
  ) {
    super(`state ${statePath} uses ${feature}, which the local runner cannot execute like AWS does`);
  }
}
