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

/**
 * The embedded stack and local runs use packages a production install may leave out: the emulators
 * (optional dependencies) and aws-cdk-lib (an optional peer). Names the missing one and how to add it.
 */
export class MissingPackageError extends LocalStackError {
  constructor(
    readonly packageName: string,
    purpose: string,
    options?: ErrorOptions,
  ) {
    super(
      `${purpose} needs the npm package ${packageName}, which is not installed (npm install ${packageName})`,
      options,
    );
  }
}

const isMissing = (err: unknown, pkg: string): boolean =>
  (err as { code?: string }).code === 'MODULE_NOT_FOUND' &&
  String((err as Error).message).includes(`'${pkg}`);

/** `load()`, or a MissingPackageError when it fails because `pkg` itself is not installed. */
export const loadOptional = <T>(pkg: string, purpose: string, load: () => T): T => {
  try {
    return load();
  } catch (err) {
    if (isMissing(err, pkg)) throw new MissingPackageError(pkg, purpose, { cause: err });
    throw err;
  }
};
