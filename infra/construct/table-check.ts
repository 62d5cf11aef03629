import { Stack } from 'aws-cdk-lib';
import { CfnGlobalTable, CfnTable, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { JOBS_TABLE } from '../../shared/jobs/schema';

/**
 * Whether a jobs table of this app has what the archiver reads (shared/jobs/schema.ts): keys `pk` /
 * `sk` (strings), GSI_JobsByStatus_v2 (`job_status` / `status_created_at`, projecting the attributes
 * Plan reads) and GSI_JobLookup_v2 (`job_id`, for lookups). Checked from the table's CloudFormation
 * resource, so it holds for a `Table` or `TableV2` defined in the same app, whoever built it; an
 * imported table (`fromTableName`, `fromTableAttributes`) has no resource here and cannot be checked
 * at synth (docs/deployment.md says how to check it).
 *
 * Returns one line naming every problem, or undefined when the table fits or cannot be seen.
 */
export const jobsTableProblem = (table: ITable): string | undefined => {
  const cfn = table.node.defaultChild;
  if (!(cfn instanceof CfnTable || cfn instanceof CfnGlobalTable)) return undefined;
  const resolved = Stack.of(table).resolve({
    keys: cfn.keySchema,
    attributes: cfn.attributeDefinitions,
    gsis: cfn.globalSecondaryIndexes ?? [],
  }) as {
    keys: KeyElement[];
    attributes: { attributeName: string; attributeType: string }[];
    gsis: {
      indexName: string;
      keySchema: KeyElement[];
      projection?: { projectionType?: string; nonKeyAttributes?: string[] };
    }[];
  };
  const typeOf = new Map(resolved.attributes.map((a) => [a.attributeName, a.attributeType]));
  const problems: string[] = [];
  const keysProblem = (where: string, keys: KeyElement[], hash: string, range?: string): void => {
    const want = `${hash} (S)${range ? ` + ${range} (S)` : ''}`;
    const got = keys.map((k) => `${k.attributeName} (${typeOf.get(k.attributeName) ?? '?'})`).join(' + ');
    if (got !== want) problems.push(`${where} keys are ${got || 'none'}, need ${want}`);
  };
  const t = JOBS_TABLE;
  keysProblem('table', resolved.keys, t.partitionKey, t.sortKey);
  const gsi = (name: string) => resolved.gsis.find((g) => g.indexName === name);

  const byStatus = gsi(t.gsiJobsByStatus.name);
  if (!byStatus) problems.push(`no GSI ${t.gsiJobsByStatus.name} (Plan queries it)`);
  else {
    keysProblem(
      t.gsiJobsByStatus.name,
      byStatus.keySchema,
      t.gsiJobsByStatus.partitionKey,
      t.gsiJobsByStatus.sortKey,
    );
    const p = byStatus.projection ?? {};
    if (p.projectionType !== 'ALL') {
      const projected = new Set(p.projectionType === 'INCLUDE' ? (p.nonKeyAttributes ?? []) : []);
      const missing = t.gsiJobsByStatus.nonKeyAttributes.filter((a) => !projected.has(a));
      if (missing.length > 0) {
        problems.push(
          `${t.gsiJobsByStatus.name} does not project ${missing.join(', ')} (INCLUDE them or ALL)`,
        );
      }
    }
  }
  const lookup = gsi(t.gsiJobLookup.name);
  if (!lookup) problems.push(`no GSI ${t.gsiJobLookup.name} (lookups by job id query it)`);
  else keysProblem(t.gsiJobLookup.name, lookup.keySchema, t.gsiJobLookup.partitionKey);

  return problems.length === 0
    ? undefined
    : `the jobs table ${table.node.path} does not have the schema the archiver reads (shared/jobs/schema.ts): ${problems.join('; ')}`;
};

interface KeyElement {
  readonly attributeName: string;
  readonly keyType: string;
}
