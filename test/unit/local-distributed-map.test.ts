import {
  applyTemplate,
  evaluatePath,
  MAP_TASK_TIMEOUT_SECONDS,
  mapEmulatorArn,
  parseJsonLines,
  replaceDistributedMaps,
} from '../../infra/local/distributed-map';
import { UnsupportedLocallyError } from '../../infra/local/errors';

/** The pure parts of the local Distributed Map emulation (the run itself: test/infra/local-runner.test.ts). */
const map = (over: Record<string, unknown> = {}) => ({
  Type: 'Map',
  ItemReader: {
    Resource: 'arn:aws:states:::s3:getObject',
    ReaderConfig: { InputType: 'JSONL' },
    Parameters: { Bucket: 'b', 'Key.$': '$.key' },
  },
  ItemSelector: { 'run.$': '$.run', 'item.$': '$$.Map.Item.Value', 'at.$': '$$.Map.Item.Index' },
  ItemProcessor: {
    ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
    StartAt: 'T',
    States: { T: { Type: 'Task', Resource: 'arn:x', End: true } },
  },
  ResultWriter: {
    Resource: 'arn:aws:states:::s3:putObject',
    Parameters: { Bucket: 'b', 'Prefix.$': '$.prefix' },
  },
  ResultPath: '$.mapRun',
  ToleratedFailurePercentage: 100,
  MaxConcurrency: 3,
  Next: 'After',
  ...over,
});

describe('replaceDistributedMaps', () => {
  it('turns a Distributed Map into a Task bound to the emulation, keeping its ResultPath and Next', () => {
    const { definition, maps } = replaceDistributedMaps({
      StartAt: 'M',
      States: { M: map(), After: { Type: 'Succeed' } },
    });
    expect((definition.States as Record<string, unknown>).M).toEqual({
      Type: 'Task',
      Resource: mapEmulatorArn('M'),
      TimeoutSeconds: MAP_TASK_TIMEOUT_SECONDS,
      ResultPath: '$.mapRun',
      Next: 'After',
    });
    expect(maps[0]).toMatchObject({
      state: 'M',
      reader: { bucket: 'b', key: '$path:$.key' },
      writer: { bucket: 'b', prefix: '$path:$.prefix' },
      maxConcurrency: 3,
      toleratedFailurePercentage: 100,
    });
    expect(maps[0]?.processor).toEqual({
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:x', End: true } },
    });
  });

  it.each([
    ['ItemBatcher', { ItemBatcher: { MaxItemsPerBatch: 2 } }],
    ['ItemsPath', { ItemsPath: '$.items' }],
    ['a CSV reader', { ItemReader: { ...map().ItemReader, ReaderConfig: { InputType: 'CSV' } } }],
    ['a WriterConfig', { ResultWriter: { ...map().ResultWriter, WriterConfig: { OutputType: 'JSONL' } } }],
    ['no ResultWriter', { ResultWriter: undefined }],
    [
      'EXPRESS children',
      {
        ItemProcessor: {
          ...map().ItemProcessor,
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'EXPRESS' },
        },
      },
    ],
  ])('refuses %s', (_what, over) => {
    const state = JSON.parse(JSON.stringify(map(over)));
    expect(() => replaceDistributedMaps({ StartAt: 'M', States: { M: state } })).toThrow(
      UnsupportedLocallyError,
    );
  });

  it('leaves inline Maps and other states alone', () => {
    const inline = {
      Type: 'Map',
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: 'P', States: {} },
    };
    const { definition, maps } = replaceDistributedMaps({ StartAt: 'I', States: { I: inline } });
    expect(maps).toEqual([]);
    expect((definition.States as Record<string, unknown>).I).toEqual(inline);
  });
});

describe('paths, templates and JSONL', () => {
  it('evaluates $, $.a.b and the item context; refuses what it does not implement', () => {
    const ctx = { input: { a: { b: 1 } }, item: { value: { x: 2 }, index: 7 } };
    expect(evaluatePath('$', ctx, 'w')).toEqual({ a: { b: 1 } });
    expect(evaluatePath('$.a.b', ctx, 'w')).toBe(1);
    expect(evaluatePath('$$.Map.Item.Value', ctx, 'w')).toEqual({ x: 2 });
    expect(evaluatePath('$$.Map.Item.Index', ctx, 'w')).toBe(7);
    expect(() => evaluatePath('$.a[0]', ctx, 'w')).toThrow(UnsupportedLocallyError);
    expect(() => evaluatePath('$$.Execution.Name', ctx, 'w')).toThrow(UnsupportedLocallyError);
    expect(() => evaluatePath('$.missing', ctx, 'w')).toThrow(/matches nothing/);
  });

  it('builds each item from ItemSelector', () => {
    const sel = map().ItemSelector;
    expect(applyTemplate(sel, { input: { run: { id: 'r' } }, item: { value: 'v', index: 0 } }, 'w')).toEqual({
      run: { id: 'r' },
      item: 'v',
      at: 0,
    });
  });

  it('reads one JSON value per non-empty line, and names a bad line', () => {
    expect(parseJsonLines('{"a":1}\n\n[2]\n"x"\n', 'r')).toEqual([{ a: 1 }, [2], 'x']);
    expect(parseJsonLines('', 'r')).toEqual([]);
    expect(() => parseJsonLines('{"a":1}\n{oops}\n', 'r')).toThrow(/line 2 is not JSON/);
  });
});
