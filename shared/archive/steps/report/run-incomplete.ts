/**
 * The errors a run ends with when it could not do all its work (the state machine's Fail states). A
 * module of its own: the construct names them without loading the Report step (and the AWS SDK).
 */
/** A run with failed groups (`RunIncomplete`). */
export const RUN_INCOMPLETE_ERROR = 'ArchiveRunIncomplete';
/** A run that saw overdue erasure requests (`ErasureOverdue`). */
export const ERASURE_OVERDUE_ERROR = 'ErasureRequestsOverdue';
