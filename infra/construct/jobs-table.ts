import type { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { JOBS_TABLE } from '../../shared/jobs/schema';

const S = AttributeType.STRING;

/**
 * The jobs table, built from `shared/jobs/schema.ts` (the local stack builds its CreateTable from the
 * same description). On-demand; rows expire by `ttl`; PITR and deletion protection because losing
 * this table loses every job's status.
 */
export const createJobsTable = (scope: Construct, id: string, removalPolicy?: RemovalPolicy): TableV2 => {
  const t = JOBS_TABLE;
  return new TableV2(scope, id, {
    partitionKey: { name: t.partitionKey, type: S },
    sortKey: { name: t.sortKey, type: S },
    billing: Billing.onDemand(),
    timeToLiveAttribute: t.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy,
    globalSecondaryIndexes: [
      {
        indexName: t.gsiJobLookup.name,
        partitionKey: { name: t.gsiJobLookup.partitionKey, type: S },
        projectionType: ProjectionType.KEYS_ONLY,
      },
      {
        indexName: t.gsiJobsByStatus.name,
        partitionKey: { name: t.gsiJobsByStatus.partitionKey, type: S },
        sortKey: { name: t.gsiJobsByStatus.sortKey, type: S },
        projectionType: ProjectionType.INCLUDE,
        nonKeyAttributes: [...t.gsiJobsByStatus.nonKeyAttributes],
      },
    ],
  });
};
