/**
 * The archiver's steps; each is `functions/<step>.ts` exporting `handler`. Order is the run's order.
 * Apart from step-functions.ts (which loads aws-cdk-lib) so the local runner can name them without CDK.
 */
export const ARCHIVER_STEPS = ['plan', 'archive-batch', 'tally', 'report', 'forget', 'redact'] as const;
export type ArchiverStep = (typeof ARCHIVER_STEPS)[number];
