import { CorruptObjectError, UnsupportedFormatError } from '../../errors';

/**
 * The archive's durable formats and their versions: the one place that knows a version string, and
 * the one version dispatch (docs/archive-format.md, "Versioning"). Format 1.0 is what this release
 * writes. A reader accepts every 1.x (a minor version only adds fields a 1.0 reader may ignore); any
 * other version is refused with one line naming the fix, never read as something else.
 */
export type FormatKind = 'part' | 'index' | 'shared-index' | 'intent';

const NAMESPACE = 'job-details-archive';
const MAJOR = 1;
const MINOR = 0;

/** The format string written into every object of `kind`: `job-details-archive/part@1.0`. */
export const formatOf = (kind: FormatKind): string => `${NAMESPACE}/${kind}@${MAJOR}.${MINOR}`;

export const PART_FORMAT = formatOf('part');
export const INDEX_FORMAT = formatOf('index');
export const SHARED_INDEX_FORMAT = formatOf('shared-index');
export const INTENT_FORMAT = formatOf('intent');

/** What a pre-1.0 local bucket needs: nothing before 1.0 was released, so there is nothing to migrate. */
const PRE_RELEASE_FIX =
  'written by a pre-1.0 build of job-details-archive, which this release does not read; rebuild the local data (delete .jobarchive/ or your --data-dir, then seed and archive again)';

/**
 * The version dispatch: checks that `value` (a parsed object's `format` field) is a format-1 `kind`.
 * A pre-1.0 string (`…/index@5`, `…/part@4`, …: no minor) or another major → UnsupportedFormatError;
 * anything else → CorruptObjectError. Returns the major version (the switch a future 2.0 extends).
 */
export const checkFormat = (kind: FormatKind, value: unknown, key: string): 1 => {
  if (typeof value !== 'string') throw new CorruptObjectError(key, `not a ${formatOf(kind)} document`);
  const m = /^job-details-archive\/([a-z-]+)@(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m || m[1] !== kind) throw new CorruptObjectError(key, `not a ${formatOf(kind)} document (${value})`);
  if (m[3] === undefined) throw new UnsupportedFormatError(key, value, PRE_RELEASE_FIX);
  if (Number(m[2]) === MAJOR) return MAJOR;
  throw new UnsupportedFormatError(
    key,
    value,
    `format ${m[2]} is not readable by this release (it reads format ${MAJOR}); upgrade job-details-archive`,
  );
};
