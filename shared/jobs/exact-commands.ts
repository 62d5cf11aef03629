import {
  BatchGetCommand,
  type DynamoDBDocumentClientResolvedConfig,
  GetCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { exactNumber } from '../details/json';

/**
 * Job rows read losslessly. A Python indexer writes any Decimal (2^63−1, a 20-digit cursor, 1.5E+300);
 * the document client's default unmarshalling turns an integer beyond 2^53 into a bigint, throws on a
 * large non-integer ("can't be converted to BigInt") and silently rounds a long fraction — and the
 * archive keeps the row once DynamoDB expires it. Every row read (getJob, Plan's GSI query, the
 * archive step's BatchGet, audit) uses these commands instead, whatever unmarshallOptions the injected
 * client was built with (library callers bring their own client).
 * Numbers come out as `exactNumber` (details/json.ts) makes them: consistent with parseJsonExact.
 */

type Config = DynamoDBDocumentClientResolvedConfig;

const exact = (c: Config): Config => ({
  ...c,
  translateConfig: {
    ...c.translateConfig,
    unmarshallOptions: { ...c.translateConfig?.unmarshallOptions, wrapNumbers: exactNumber },
  },
});

// Subclasses keep `instanceof GetCommand` (and the document client's marshalling of the input); only
// the output's numbers change.
export class ExactGetCommand extends GetCommand {
  protected override addMarshallingMiddleware(c: Config): void {
    super.addMarshallingMiddleware(exact(c));
  }
}

export class ExactQueryCommand extends QueryCommand {
  protected override addMarshallingMiddleware(c: Config): void {
    super.addMarshallingMiddleware(exact(c));
  }
}

export class ExactBatchGetCommand extends BatchGetCommand {
  protected override addMarshallingMiddleware(c: Config): void {
    super.addMarshallingMiddleware(exact(c));
  }
}
