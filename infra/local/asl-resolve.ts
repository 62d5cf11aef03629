import type { ArchiverStep } from '../construct/step-names';
import { UnsupportedLocallyError } from './errors';

/** Placeholder account/region of the ARNs the local runner binds handlers to. */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT = '123456789012';

/**
 * The details bucket as the definition names it (ItemReader, ResultWriter). CloudFormation resolves
 * it to the construct's bucket, which the steps also receive as ECOM_JOB_DETAILS_BUCKET; locally the
 * runner puts that same variable's bucket in its place when it runs.
 */
export const LOCAL_BUCKET_PLACEHOLDER = 'jda-local-details-bucket';

export const localFunctionArn = (step: ArchiverStep): string =>
  `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:jda-${step}`;

const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': LOCAL_REGION,
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
};

/**
 * Turns a synthesized `DefinitionString` (a string, or `Fn::Join` of strings and tokens) into plain
 * ASL text. Only function ARNs (`Fn::GetAtt [<function>, Arn]`, mapped by `arnOf`), the references
 * `refOf` knows (the details bucket) and pseudo parameters are allowed: any other token means the
 * definition reaches a resource the local runner cannot stand in for.
 */
export const resolveDefinitionString = (
  value: unknown,
  arnOf: (logicalId: string) => string | undefined,
  refOf: (logicalId: string) => string | undefined = () => undefined,
): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    const join = v['Fn::Join'];
    if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
      return (join[1] as unknown[]).map((part) => resolveDefinitionString(part, arnOf, refOf)).join(join[0]);
    }
    const getAtt = v['Fn::GetAtt'];
    if (Array.isArray(getAtt) && getAtt[1] === 'Arn' && typeof getAtt[0] === 'string') {
      const arn = arnOf(getAtt[0]);
      if (arn !== undefined) return arn;
    }
    const ref = v.Ref;
    if (typeof ref === 'string' && PSEUDO[ref] !== undefined) return PSEUDO[ref];
    const known = typeof ref === 'string' ? refOf(ref) : undefined;
    if (known !== undefined) return known;
  }
  throw new UnsupportedLocallyError('(definition)', `the CloudFormation token ${JSON.stringify(value)}`);
};
