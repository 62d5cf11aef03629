/**
 * The archiver's steps; each is `functions/<step>.ts` exporting `handler`. Order is the run's order.
 * Apart from step-functions.ts (which loads aws-cdk-lib) so the local runner can name them without CDK.
 */
export const ARCHIVER_STEPS = ['plan', 'archive-batch', 'tally', 'report', 'forget', 'redact'] as const;
export type ArchiverStep = (typeof ARCHIVER_STEPS)[number];

/** `archive-batch` → `archiveBatch`: the step's key in step-keyed props and in `functions`. */
export const camelStep = <S extends ArchiverStep>(step: S): CamelStep<S> =>
  step.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as CamelStep<S>;
type CamelStep<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<CamelStep<B>>}` : S;
