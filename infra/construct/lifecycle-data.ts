import { App, Stack } from 'aws-cdk-lib';
import { Bucket, type CfnBucket, type LifecycleRule } from 'aws-cdk-lib/aws-s3';
import { type DetailsBucketOptions, detailsLifecycleRules, noncurrentVersionRules } from './details-bucket';

/**
 * The details bucket's lifecycle rules as data — for a bucket this construct cannot touch (imported,
 * or owned by another app, e.g. a Python CDK stack): CloudFormation's shape
 * (`AWS::S3::Bucket` `LifecycleConfiguration.Rules`), exactly what the construct renders on a bucket
 * of its own app (a test holds the two equal). `jobarchive lifecycle --json` prints it; the standalone
 * stack outputs it for an imported bucket.
 */
export const lifecycleRulesData = (rules: readonly LifecycleRule[]): Record<string, unknown>[] => {
  // A throwaway tree: CDK renders the rules, nothing is synthesized or written.
  const stack = new Stack(new App(), 'LifecycleRules');
  const bucket = new Bucket(stack, 'Bucket', { lifecycleRules: [...rules] });
  const cfn = bucket.node.defaultChild as CfnBucket;
  const config = stack.resolve(cfn.lifecycleConfiguration) as { rules: unknown[] };
  return config.rules.map((r) => pascal(r) as Record<string, unknown>);
};

/** L1 property names (`transitionInDays`) → CloudFormation's (`TransitionInDays`), recursively. */
const pascal = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(pascal);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k.charAt(0).toUpperCase() + k.slice(1), pascal(x)]),
  );
};

/**
 * Every rule a details bucket with these options needs: the noncurrent-version ones included (they
 * only act on a versioned bucket, and whether another app's bucket is versioned is unknown here).
 */
export const neededLifecycleRules = (o: DetailsBucketOptions): LifecycleRule[] => [
  ...detailsLifecycleRules(o),
  ...noncurrentVersionRules(),
];
