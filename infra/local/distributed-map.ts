import { randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { mapLimit } from '../../shared/concurrency';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './asl-resolve';
import { UnsupportedLocallyError } from './errors';

/**
 * aws-local-stepfunctions runs a Map state's items itself but ignores ItemReader and ResultWriter. The
 * runner therefore replaces each Distributed Map with a Task bound to this emulation, which does what
 * the Step Functions documentation says those fields do, for exactly the subset the archiver uses:
 *
 * - ItemReader `arn:aws:states:::s3:getObject` with `ReaderConfig.InputType: JSONL`: one item per
 *   non-empty line of the object, in order (Parameters `Bucket` / `Key`, each may be a `.$` path).
 * - ItemSelector: evaluated per item, `$$.Map.Item.Value` / `$$.Map.Item.Index` and `$.…` paths.
 * - ItemProcessor: each item is its own child execution of the processor's definition (run by
 *   `runChild`), at most MaxConcurrency at once.
 * - ToleratedFailurePercentage: the Map run fails with `States.ExceedToleratedFailureThreshold` when
 *   more than that share of children fail (the results are written first).
 * - ResultWriter `arn:aws:states:::s3:putObject` (no WriterConfig: Transformation NONE, JSON): under
 *   `{Prefix}/{map run id}/`, `SUCCEEDED_0.json` / `FAILED_0.json` / `PENDING_0.json` (JSON arrays of
 *   child executions: ExecutionArn, Name, Input and Output as JSON strings, Status, Error / Cause,
 *   dates) for the statuses that have any, and `manifest.json` (`DestinationBucket`, `MapRunArn`,
 *   `ResultFiles` by status with `Key` and `Size`). The state's result is
 *   `{MapRunArn, ResultWriterDetails: {Bucket, Key}}`, placed by its ResultPath.
 *
 * Anything else on a Distributed Map (ItemBatcher, ItemsPath, ResultSelector, WriterConfig, CSV, …)
 * is refused with UnsupportedLocallyError: never run differently from AWS without saying so.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields of a Distributed Map the emulation implements (the rest of the state is refused). */
const MAP_FIELDS = new Set([
  'Type',
  'Comment',
  'Label',
  'ItemReader',
  'ItemSelector',
  'ItemProcessor',
  'ResultWriter',
  'ResultPath',
  'InputPath',
  'OutputPath',
  'MaxConcurrency',
  'ToleratedFailurePercentage',
  'Retry',
  'Catch',
  'Next',
  'End',
]);
/** Fields the replacing Task keeps: the interpreter applies them exactly as to the Map. */
const KEPT_ON_TASK = ['Comment', 'InputPath', 'OutputPath', 'ResultPath', 'Retry', 'Catch', 'Next', 'End'];

/** 2^31 − 1 ms: longer and Node's timer fires at once. */
export const MAP_TASK_TIMEOUT_SECONDS = 2_147_483;

/** The ARN the replacing Task calls (a Lambda ARN shape, which the interpreter accepts). */
export const mapEmulatorArn = (stateName: string): string =>
  `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:jda-local-map-${stateName}`;

export interface DistributedMapSpec {
  readonly state: string;
  readonly reader: { readonly bucket: string; readonly key: string };
  readonly itemSelector: Json | undefined;
  readonly processor: Json;
  readonly writer: { readonly bucket: string; readonly prefix: string };
  readonly maxConcurrency: number;
  readonly toleratedFailurePercentage: number;
}

const refuse = (path: string, what: string): never => {
  throw new UnsupportedLocallyError(path, what);
};

/** `Name` or `Name.$` of a Parameters object: the literal, or the path prefixed with `$path:`. */
const paramOf = (params: Json, name: string, path: string): string => {
  const literal = params[name];
  const dynamic = params[`${name}.$`];
  if (typeof literal === 'string' && dynamic === undefined) return literal;
  if (typeof dynamic === 'string' && literal === undefined) return `$path:${dynamic}`;
  return refuse(path, `Parameters.${name} (expected a string or a path)`);
};

export const parseDistributedMap = (name: string, state: Json, path: string): DistributedMapSpec => {
  for (const k of Object.keys(state)) if (!MAP_FIELDS.has(k)) refuse(path, `${k} on a Distributed Map`);
  const reader = state.ItemReader;
  if (!isObject(reader) || reader.Resource !== 'arn:aws:states:::s3:getObject')
    refuse(path, 'an ItemReader other than s3:getObject');
  const r = reader as Json;
  for (const k of Object.keys(r))
    if (!['Resource', 'ReaderConfig', 'Parameters'].includes(k)) refuse(path, `ItemReader.${k}`);
  const config = r.ReaderConfig;
  if (!isObject(config) || config.InputType !== 'JSONL' || Object.keys(config).length !== 1)
    refuse(path, 'ItemReader.ReaderConfig other than {InputType: JSONL}');
  const rp = isObject(r.Parameters) ? r.Parameters : refuse(path, 'ItemReader without Parameters');
  for (const k of Object.keys(rp))
    if (!['Bucket', 'Bucket.$', 'Key', 'Key.$'].includes(k)) refuse(path, `ItemReader.Parameters.${k}`);

  const writer = state.ResultWriter;
  if (!isObject(writer) || writer.Resource !== 'arn:aws:states:::s3:putObject')
    refuse(path, 'a Distributed Map without an s3:putObject ResultWriter');
  const w = writer as Json;
  for (const k of Object.keys(w))
    if (!['Resource', 'Parameters'].includes(k)) refuse(path, `ResultWriter.${k}`);
  const wp = isObject(w.Parameters) ? w.Parameters : refuse(path, 'ResultWriter without Parameters');
  for (const k of Object.keys(wp))
    if (!['Bucket', 'Bucket.$', 'Prefix', 'Prefix.$'].includes(k))
      refuse(path, `ResultWriter.Parameters.${k}`);

  const processor = state.ItemProcessor;
  if (!isObject(processor)) return refuse(path, 'a Map without ItemProcessor');
  const pc = processor.ProcessorConfig;
  if (!isObject(pc) || pc.Mode !== 'DISTRIBUTED')
    refuse(path, 'ItemProcessor.ProcessorConfig.Mode other than DISTRIBUTED');
  if ((pc as Json).ExecutionType !== 'STANDARD')
    refuse(path, 'a child ExecutionType other than STANDARD (EXPRESS limits are not emulated)');
  const { ProcessorConfig: _pc, ...definition } = processor;

  const maxConcurrency = state.MaxConcurrency ?? 0;
  const tolerated = state.ToleratedFailurePercentage ?? 0;
  if (typeof maxConcurrency !== 'number' || maxConcurrency < 0) refuse(path, 'MaxConcurrency');
  if (typeof tolerated !== 'number' || tolerated < 0 || tolerated > 100)
    refuse(path, 'ToleratedFailurePercentage');
  if (state.ItemSelector !== undefined && !isObject(state.ItemSelector)) refuse(path, 'ItemSelector');
  return {
    state: name,
    reader: { bucket: paramOf(rp, 'Bucket', path), key: paramOf(rp, 'Key', path) },
    itemSelector: state.ItemSelector as Json | undefined,
    processor: definition,
    writer: { bucket: paramOf(wp, 'Bucket', path), prefix: paramOf(wp, 'Prefix', path) },
    maxConcurrency: maxConcurrency as number,
    toleratedFailurePercentage: tolerated as number,
  };
};

/**
 * The definition with every top-level Distributed Map replaced by a Task calling `mapEmulatorArn`,
 * and the maps found. Distributed Maps nested inside other states are refused.
 */
export const replaceDistributedMaps = (
  definition: Json,
): { definition: Json; maps: DistributedMapSpec[] } => {
  const states = isObject(definition.States) ? definition.States : {};
  const maps: DistributedMapSpec[] = [];
  const out: Json = {};
  for (const [name, state] of Object.entries(states)) {
    const s = isObject(state) ? state : {};
    const mode =
      isObject(s.ItemProcessor) && isObject(s.ItemProcessor.ProcessorConfig)
        ? s.ItemProcessor.ProcessorConfig.Mode
        : undefined;
    if (s.Type !== 'Map' || mode !== 'DISTRIBUTED') {
      out[name] = state;
      continue;
    }
    const spec = parseDistributedMap(name, s, name);
    const nested = JSON.stringify(spec.processor);
    if (nested.includes('"DISTRIBUTED"')) refuse(name, 'a Distributed Map inside a Distributed Map');
    maps.push(spec);
    // A Map state has no timeout of its own (the execution's bounds it). The interpreter gives a Task
    // without TimeoutSeconds 60 s; this is the longest its timer (a Node setTimeout) can hold.
    const task: Json = {
      Type: 'Task',
      Resource: mapEmulatorArn(name),
      TimeoutSeconds: MAP_TASK_TIMEOUT_SECONDS,
    };
    for (const k of KEPT_ON_TASK) if (s[k] !== undefined) task[k] = s[k];
    out[name] = task;
  }
  return { definition: { ...definition, States: out }, maps };
};

// ---------- paths ----------

export interface PathContext {
  readonly input: unknown;
  readonly item?: { readonly value: unknown; readonly index: number };
}

/** `$`, `$.a.b`, `$$.Map.Item.Value`, `$$.Map.Item.Index`: all the emulated fields use. */
export const evaluatePath = (path: string, ctx: PathContext, where: string): unknown => {
  const walk = (root: unknown, rest: string): unknown => {
    if (rest === '') return root;
    if (!/^(\.[A-Za-z0-9_]+)+$/.test(rest)) return refuse(where, `the path ${path}`);
    let v = root;
    for (const k of rest.slice(1).split('.')) v = isObject(v) ? v[k] : undefined;
    if (v === undefined)
      throw Object.assign(new Error(`${where}: ${path} matches nothing`), { name: 'States.Runtime' });
    return v;
  };
  if (path.startsWith('$$.Map.Item.')) {
    if (!ctx.item) return refuse(where, `${path} outside an item`);
    if (path === '$$.Map.Item.Value') return ctx.item.value;
    if (path === '$$.Map.Item.Index') return ctx.item.index;
    return refuse(where, `the path ${path}`);
  }
  if (path.startsWith('$$')) return refuse(where, `the context path ${path}`);
  if (path.startsWith('$')) return walk(ctx.input, path.slice(1));
  return refuse(where, `the path ${path}`);
};

const resolveParam = (value: string, ctx: PathContext, where: string): string => {
  if (!value.startsWith('$path:')) return value;
  const v = evaluatePath(value.slice('$path:'.length), ctx, where);
  if (typeof v !== 'string')
    throw Object.assign(new Error(`${where}: expected a string`), { name: 'States.Runtime' });
  return v;
};

/** A Parameters-style template (`k.$` fields are paths), as ItemSelector is evaluated per item. */
export const applyTemplate = (template: Json, ctx: PathContext, where: string): Json => {
  const out: Json = {};
  for (const [k, v] of Object.entries(template)) {
    if (k.endsWith('.$')) {
      if (typeof v !== 'string') refuse(where, `${k} is not a path`);
      out[k.slice(0, -2)] = evaluatePath(v as string, ctx, `${where}.${k}`);
    } else out[k] = isObject(v) ? applyTemplate(v, ctx, `${where}.${k}`) : v;
  }
  return out;
};

/** JSONL as the ItemReader reads it: one JSON value per non-empty line. */
export const parseJsonLines = (text: string, where: string): unknown[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw Object.assign(new Error(`${where}: line ${i + 1} is not JSON`), {
          name: 'States.ItemReaderFailed',
        });
      }
    });

// ---------- the run ----------

export type ChildOutcome =
  | { readonly status: 'SUCCEEDED'; readonly output: unknown }
  | { readonly status: 'FAILED'; readonly error: string; readonly cause: string };

export interface MapRunDeps {
  readonly s3: S3Client;
  /** The resolved bucket for the definition's bucket placeholder (see asl-resolve). */
  readonly resolveBucket: (bucket: string) => string;
  readonly stateMachineArn: string;
  readonly executionName: string;
  readonly runChild: (definition: Json, input: unknown, name: string) => Promise<ChildOutcome>;
}

export interface ResultEntry {
  readonly ExecutionArn: string;
  readonly Name: string;
  readonly StateMachineArn: string;
  readonly Status: 'SUCCEEDED' | 'FAILED' | 'PENDING';
  readonly Input: string;
  readonly InputDetails: { readonly Included: true };
  readonly Output?: string;
  readonly OutputDetails?: { readonly Included: true };
  readonly Error?: string;
  readonly Cause?: string;
  readonly StartDate: string;
  readonly StopDate?: string;
  readonly RedriveCount: 0;
  readonly RedriveStatus: 'NOT_REDRIVABLE';
}

const errorOf = (name: string, message: string) => Object.assign(new Error(message), { name });

export const runDistributedMap = async (
  spec: DistributedMapSpec,
  input: unknown,
  deps: MapRunDeps,
): Promise<{ MapRunArn: string; ResultWriterDetails: { Bucket: string; Key: string } }> => {
  const where = spec.state;
  const readerBucket = deps.resolveBucket(resolveParam(spec.reader.bucket, { input }, `${where}.ItemReader`));
  const readerKey = resolveParam(spec.reader.key, { input }, `${where}.ItemReader`);
  const writerBucket = deps.resolveBucket(
    resolveParam(spec.writer.bucket, { input }, `${where}.ResultWriter`),
  );
  const prefix = resolveParam(spec.writer.prefix, { input }, `${where}.ResultWriter`);

  let text: string;
  try {
    const got = await deps.s3.send(new GetObjectCommand({ Bucket: readerBucket, Key: readerKey }));
    text = (await got.Body?.transformToString('utf8')) ?? '';
  } catch (err) {
    throw errorOf(
      'States.ItemReaderFailed',
      `${where}: s3://${readerBucket}/${readerKey}: ${(err as Error).message}`,
    );
  }
  const items = parseJsonLines(text, `${where} ItemReader`);

  const mapRunId = randomUUID();
  const mapRunArn = `${deps.stateMachineArn.replace(':stateMachine:', ':mapRun:')}/${spec.state}:${mapRunId}`;
  const childMachineArn = `${deps.stateMachineArn}/${spec.state}`;
  const entries = await mapLimit(
    items,
    spec.maxConcurrency > 0 ? spec.maxConcurrency : items.length || 1,
    async (value, index) => {
      const childInput = spec.itemSelector
        ? applyTemplate(spec.itemSelector, { input, item: { value, index } }, `${where}.ItemSelector`)
        : value;
      const name = `${mapRunId}_${index}`;
      const base = {
        ExecutionArn: `${childMachineArn.replace(':stateMachine:', ':execution:')}:${name}`,
        Name: name,
        StateMachineArn: childMachineArn,
        Input: JSON.stringify(childInput),
        InputDetails: { Included: true as const },
        StartDate: new Date().toISOString(),
        RedriveCount: 0 as const,
        RedriveStatus: 'NOT_REDRIVABLE' as const,
      };
      const outcome = await deps.runChild(spec.processor, childInput, name);
      const StopDate = new Date().toISOString();
      return outcome.status === 'SUCCEEDED'
        ? ({
            ...base,
            Status: 'SUCCEEDED',
            Output: JSON.stringify(outcome.output),
            OutputDetails: { Included: true },
            StopDate,
          } satisfies ResultEntry)
        : ({
            ...base,
            Status: 'FAILED',
            Error: outcome.error,
            Cause: outcome.cause,
            StopDate,
          } satisfies ResultEntry);
    },
  );

  const manifestKey = await writeMapResults(deps.s3, writerBucket, prefix, mapRunId, mapRunArn, entries);
  const failed = entries.filter((e) => e.Status === 'FAILED').length;
  if (items.length > 0 && (failed / items.length) * 100 > spec.toleratedFailurePercentage) {
    throw errorOf(
      'States.ExceedToleratedFailureThreshold',
      `${failed} of ${items.length} child executions failed (tolerated: ${spec.toleratedFailurePercentage}%)`,
    );
  }
  return { MapRunArn: mapRunArn, ResultWriterDetails: { Bucket: writerBucket, Key: manifestKey } };
};

/** ResultWriter's layout (see the header): result files by status, then manifest.json; returns its key. */
export const writeMapResults = async (
  s3: S3Client,
  bucket: string,
  prefix: string,
  mapRunId: string,
  mapRunArn: string,
  entries: readonly ResultEntry[],
): Promise<string> => {
  const dir = `${prefix.replace(/\/+$/, '')}/${mapRunId}/`;
  const files: Record<'SUCCEEDED' | 'FAILED' | 'PENDING', { Key: string; Size: number }[]> = {
    FAILED: [],
    PENDING: [],
    SUCCEEDED: [],
  };
  for (const status of ['SUCCEEDED', 'FAILED', 'PENDING'] as const) {
    const of = entries.filter((e) => e.Status === status);
    if (of.length === 0) continue;
    const body = Buffer.from(JSON.stringify(of), 'utf8');
    const key = `${dir}${status}_0.json`;
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' }),
    );
    files[status].push({ Key: key, Size: body.length });
  }
  const manifestKey = `${dir}manifest.json`;
  const manifest = { DestinationBucket: bucket, MapRunArn: mapRunArn, ResultFiles: files };
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: manifestKey,
      Body: JSON.stringify(manifest),
      ContentType: 'application/json',
    }),
  );
  return manifestKey;
};
