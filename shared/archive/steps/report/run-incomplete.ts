/**
 * The error a run with failed groups ends with (the state machine's `RunIncomplete` Fail state). A
 * module of its own: the construct names it without loading the Report step (and the AWS SDK).
 */
export const RUN_INCOMPLETE_ERROR = 'ArchiveRunIncomplete';
