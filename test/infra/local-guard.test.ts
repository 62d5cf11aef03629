import { assertLocallyExecutable } from '../../infra/local/asl-guard';
import { LOCAL_ACCOUNT, localFunctionArn, resolveDefinitionString } from '../../infra/local/asl-resolve';
import { UnsupportedLocallyError } from '../../infra/local/errors';

/** Small hand-made definitions: the guard names the state and the feature, and lets the plain ones through. */

const ARN = localFunctionArn('plan');
const BOUND = [ARN];

const task = (extra: Record<string, unknown> = {}) => ({ Type: 'Task', Resource: ARN, End: true, ...extra });
const machine = (states: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  StartAt: Object.keys(states)[0],
  States: states,
  ...extra,
});
const mapOf = (processor: unknown, extra: Record<string, unknown> = {}) => ({
  Type: 'Map',
  ItemsPath: '$.items',
  ItemProcessor: processor,
  End: true,
  ...extra,
});

const rejection = (definition: unknown): UnsupportedLocallyError => {
  try {
    assertLocallyExecutable(definition, BOUND);
  } catch (err) {
    expect(err).toBeInstanceOf(UnsupportedLocallyError);
    return err as UnsupportedLocallyError;
  }
  throw new Error('expected UnsupportedLocallyError');
};

describe('assertLocallyExecutable', () => {
  it('accepts JSONPath Tasks, Choices, Maps and Parallels bound to known ARNs', () => {
    const def = machine({
      A: task({ Next: 'B', End: undefined }),
      B: {
        Type: 'Choice',
        Choices: [{ Not: { Variable: '$.x', IsNull: true }, Next: 'C' }],
        Default: 'D',
      },
      C: mapOf(machine({ Inner: task() }), { ItemSelector: { 'v.$': '$$.Map.Item.Value' } }),
      D: { Type: 'Parallel', Branches: [machine({ P: task() })], End: true },
    });
    expect(() => assertLocallyExecutable(def, BOUND)).not.toThrow();
  });

  it.each([
    ['ItemReader', { ItemReader: { Resource: 'arn:aws:states:::s3:getObject' } }],
    ['ItemBatcher', { ItemBatcher: { MaxItemsPerBatch: 10 } }],
    ['ResultWriter', { ResultWriter: { Resource: 'arn:aws:states:::s3:putObject' } }],
  ])('rejects a Map with %s', (feature, extra) => {
    const err = rejection(machine({ Groups: mapOf(machine({ Inner: task() }), extra) }));
    expect(err.statePath).toBe('Groups');
    expect(err.feature).toBe(feature);
  });

  it('rejects QueryLanguage JSONata at the top level and on a state', () => {
    expect(rejection(machine({ A: task() }, { QueryLanguage: 'JSONata' })).statePath).toBe('(top level)');
    const err = rejection(machine({ A: task({ QueryLanguage: 'JSONata' }) }));
    expect(err.statePath).toBe('A');
    expect(err.feature).toBe('QueryLanguage JSONata');
  });

  it.each(['Assign', 'Arguments', 'Output'])('rejects %s (JSONata/variables)', (field) => {
    const err = rejection(machine({ A: task({ [field]: { x: 1 } }) }));
    expect(err).toMatchObject({ statePath: 'A', feature: field });
  });

  it('rejects a Task whose Resource is not a bound Lambda ARN', () => {
    const other = `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT}:function:someone-else`;
    expect(rejection(machine({ A: task({ Resource: other }) })).feature).toContain(other);
    expect(rejection(machine({ A: task({ Resource: 'arn:aws:states:::dynamodb:getItem' }) })).statePath).toBe(
      'A',
    );
  });

  it('finds features nested in Map processors and Parallel branches, naming the path', () => {
    const inMap = rejection(machine({ Outer: mapOf(machine({ Inner: task({ Assign: { a: 1 } }) })) }));
    expect(inMap.statePath).toBe('Outer/ItemProcessor/Inner');
    const inIterator = rejection(
      machine({ Outer: { Type: 'Map', Iterator: machine({ Old: task({ Output: {} }) }), End: true } }),
    );
    expect(inIterator.statePath).toBe('Outer/Iterator/Old');
    const inBranch = rejection(
      machine({
        Par: {
          Type: 'Parallel',
          Branches: [machine({ Ok: task() }), machine({ Bad: task({ Resource: 'x' }) })],
          End: true,
        },
      }),
    );
    expect(inBranch.statePath).toBe('Par/Branches[1]/Bad');
    const deep = rejection(
      machine({ M: mapOf(machine({ N: mapOf(machine({ T: task() }), { ItemBatcher: {} }) })) }),
    );
    expect(deep).toMatchObject({ statePath: 'M/ItemProcessor/N', feature: 'ItemBatcher' });
  });

  it('rejects Choice type tests set to false, which the local interpreter always reads as false', () => {
    const err = rejection(
      machine({
        C: {
          Type: 'Choice',
          Choices: [
            {
              And: [
                { Variable: '$.c', IsPresent: true },
                { Variable: '$.c', IsNull: false },
              ],
              Next: 'D',
            },
          ],
          Default: 'D',
        },
        D: { Type: 'Succeed' },
      }),
    );
    expect(err.statePath).toBe('C');
    expect(err.feature).toMatch(/^IsNull: false/);
  });
});

describe('resolveDefinitionString', () => {
  const arnOf = (id: string) => (id === 'PlanFn' ? ARN : undefined);

  it('joins strings, function ARNs and pseudo parameters', () => {
    const value = {
      'Fn::Join': [
        '',
        [
          '{"Resource":"',
          { 'Fn::GetAtt': ['PlanFn', 'Arn'] },
          '","Other":"arn:',
          { Ref: 'AWS::Partition' },
          ':states:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          '"}',
        ],
      ],
    };
    expect(JSON.parse(resolveDefinitionString(value, arnOf))).toEqual({
      Resource: ARN,
      Other: `arn:aws:states:us-east-1:${LOCAL_ACCOUNT}`,
    });
    expect(resolveDefinitionString('{"plain":true}', arnOf)).toBe('{"plain":true}');
  });

  it('refuses any other token: the definition reaches something the runner cannot stand in for', () => {
    for (const token of [
      { 'Fn::GetAtt': ['SomeQueue', 'Arn'] },
      { Ref: 'SomeTopic' },
      { 'Fn::GetAtt': ['PlanFn', 'Name'] },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a CloudFormation Fn::Sub, not a JS template
      { 'Fn::Sub': 'arn:${AWS::Partition}:sns' },
    ]) {
      expect(() => resolveDefinitionString({ 'Fn::Join': ['', ['a', token]] }, arnOf)).toThrow(
        UnsupportedLocallyError,
      );
    }
  });
});
