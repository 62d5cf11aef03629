import { Stack, Validations } from 'aws-cdk-lib';
import type { CfnPolicy } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';

/**
 * The construct's acknowledgments of cdk-nag findings, through aws-cdk-lib's own Validations API: the
 * construct never imports cdk-nag (enable-nag.ts, the app's, does). cdk-nag v3 runs as a validation
 * plugin: any unacknowledged finding makes `synth()` throw. Every acknowledgment below names one
 * finding (`Rule[finding]`, no prefix matching) and says why.
 */

export const acknowledge = (scope: IConstruct, id: string, reason: string): void => {
  Validations.of(scope).acknowledge({ id, reason });
};

/**
 * The string cdk-nag writes for a resolved CloudFormation value in a finding id: `Fn::GetAtt` →
 * `<Id.Attr>`, `Ref` → `<Id>`, `Fn::Join` joined, `${x}` → `<x>` (same rules as cdk-nag's own
 * flattenCfnReference, which the package does not export).
 */
export const flattenForNag = (value: unknown): string => {
  if (value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/}/g, '>');
  if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v['Fn::Join'])) {
      const [delimiter, items] = v['Fn::Join'] as [string, unknown[]];
      return items.map(flattenForNag).join(delimiter);
    }
    if (v['Fn::Sub'] !== undefined) return flattenForNag(v['Fn::Sub']);
    if (Array.isArray(v['Fn::GetAtt'])) {
      const [resource, attribute] = v['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenForNag(resource)}.${flattenForNag(attribute)}>`;
    }
    if (v['Fn::ImportValue'] !== undefined) return flattenForNag(v['Fn::ImportValue']);
    if (v.Ref !== undefined) return `<${flattenForNag(v.Ref)}>`;
  }
  return JSON.stringify(value);
};

/** Acknowledge `AwsSolutions-IAM5[Resource::<arn>]` for one wildcard resource ARN (a token string is fine). */
export const acknowledgeWildcardResource = (scope: IConstruct, arn: string, reason: string): void => {
  acknowledge(scope, `AwsSolutions-IAM5[Resource::${flattenForNag(Stack.of(scope).resolve(arn))}]`, reason);
};

/** The wildcard resources of a policy, named as cdk-nag names them in `AwsSolutions-IAM5[Resource::…]`. */
export const wildcardResources = (policy: CfnPolicy): string[] => {
  const doc = Stack.of(policy).resolve(policy.policyDocument) as { Statement?: Record<string, unknown>[] };
  const found = new Set<string>();
  for (const st of doc.Statement ?? []) {
    if (st.Effect !== 'Allow') continue;
    const resources = Array.isArray(st.Resource) ? st.Resource : [st.Resource];
    for (const r of resources) {
      const flat = flattenForNag(r);
      if (flat.includes('*')) found.add(flat);
    }
  }
  return [...found];
};
