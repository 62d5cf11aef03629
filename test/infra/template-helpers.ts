import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { type CfnElement, type Stack, Validations } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { flattenForNag } from '../../infra/construct/nag';

/** Helpers that read a synthesized template the way an IAM reviewer would. */

/**
 * Cloud assembly dirs for the Apps of one test file, removed after it (an App without an outdir
 * makes a temp dir as soon as it is constructed, and nothing removes it).
 */
export const useOutdirs = (): (() => string) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'jda-infra-test-'));
    dirs.push(dir);
    return dir;
  };
};

export const logicalId = (construct: IConstruct, stack: Stack): string =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/**
 * The cdk-nag findings acknowledged on a construct itself (not its scopes), by rule id
 * (`AwsSolutions-S1`, whatever prefix aws-cdk-lib stores it under), with their reasons.
 */
export const acknowledgedRules = (construct: IConstruct): Record<string, string> =>
  Object.fromEntries(
    construct.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([id, reason]) => [id.replace(/^[A-Za-z]+::/, ''), reason]),
  );

/** Logical id of a function's execution role. */
export const roleIdOf = (fn: IFunction, stack: Stack): string => {
  if (!fn.role) throw new Error(`${fn.node.path} has no role`);
  return logicalId(fn.role, stack);
};

export interface Statement {
  readonly effect: string;
  readonly actions: string[];
  /** Flattened like cdk-nag does: `<Bucket1234.Arn>/job-details/*`. */
  readonly resources: string[];
  readonly condition?: Record<string, unknown>;
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Every statement of every inline policy attached to the role. */
export const statementsOfRole = (template: Template, roleId: string): Statement[] => {
  const policies = template.findResources('AWS::IAM::Policy');
  const out: Statement[] = [];
  for (const policy of Object.values(policies)) {
    const props = policy.Properties as {
      Roles?: unknown[];
      PolicyDocument: { Statement: Record<string, unknown>[] };
    };
    if (!asArray(props.Roles).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId }))) continue;
    for (const st of props.PolicyDocument.Statement) {
      out.push({
        effect: String(st.Effect),
        actions: asArray(st.Action as string | string[]).sort(),
        resources: asArray(st.Resource).map(flattenForNag),
        ...(st.Condition ? { condition: st.Condition as Record<string, unknown> } : {}),
      });
    }
  }
  return out;
};

/** What a role may do to objects, by key prefix (`{ 'job-details/': ['s3:GetObject'] }`). */
export const objectAccess = (statements: Statement[], bucketArn: string): Record<string, string[]> => {
  const out: Record<string, Set<string>> = {};
  for (const st of statements) {
    for (const r of st.resources) {
      if (!r.startsWith(`${bucketArn}/`)) continue;
      const prefix = r.slice(bucketArn.length + 1).replace(/\*$/, '');
      out[prefix] ??= new Set();
      for (const a of st.actions) out[prefix].add(a);
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
};

/** Stands for a ListBucket grant without a prefix condition (see grantMissingKeysAre404). */
export const ANY_KEY = '<any key: missing keys answer 404>';

/** `s3:prefix` values a role may list the bucket with (`ANY_KEY` for an unconditional grant). */
export const listPrefixes = (statements: Statement[], bucketArn: string): string[] =>
  statements
    .filter((st) => st.actions.includes('s3:ListBucket'))
    .flatMap((st) => {
      expect(st.resources).toEqual([bucketArn]);
      if (!st.condition) return [ANY_KEY];
      const like = (st.condition.StringLike as Record<string, unknown> | undefined)?.['s3:prefix'];
      expect(like).toBeDefined();
      return asArray(like as string | string[]);
    })
    .sort();

/** DynamoDB actions by resource. */
export const tableAccess = (statements: Statement[]): Record<string, string[]> => {
  const out: Record<string, string[]> = {};
  for (const st of statements) {
    const ddb = st.actions.filter((a) => a.startsWith('dynamodb:'));
    if (ddb.length === 0) continue;
    for (const r of st.resources) out[r] = [...(out[r] ?? []), ...ddb].sort();
  }
  return out;
};

/** Every bucket policy of `template` (there must be `count`) denies each request made without TLS. */
export const expectTlsDeniedOnEveryBucket = (template: Template, count: number): void => {
  const policies = Object.values(template.findResources('AWS::S3::BucketPolicy'));
  expect(policies).toHaveLength(count);
  for (const policy of policies)
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Principal: { AWS: '*' },
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
};
