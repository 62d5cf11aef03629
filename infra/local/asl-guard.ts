import { UnsupportedLocallyError } from './errors';

type Json = Record<string, unknown>;

/**
 * Fields aws-local-stepfunctions would silently ignore (or misread), so a local run would not be the
 * run AWS does: Distributed Map item sources/batching/result export, JSONata-only fields, variables.
 */
const UNSUPPORTED_FIELDS = [
  'ItemReader',
  'ItemBatcher',
  'ResultWriter',
  'Assign',
  'Arguments',
  'Output',
  'Credentials',
];

/**
 * Choice type tests. aws-local-stepfunctions evaluates `"IsNull": false` (and the others set to false)
 * as always false, where AWS reads "is not null"; write `Not` around the `true` test instead.
 */
const TYPE_TESTS = ['IsNull', 'IsPresent', 'IsNumeric', 'IsString', 'IsBoolean', 'IsTimestamp'];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const checkChoiceRule = (rule: unknown, path: string): void => {
  if (!isObject(rule)) return;
  for (const test of TYPE_TESTS) {
    if (rule[test] === false)
      throw new UnsupportedLocallyError(path, `${test}: false (write Not around ${test}: true)`);
  }
  for (const key of ['And', 'Or'] as const) {
    const list = rule[key];
    if (Array.isArray(list)) for (const r of list) checkChoiceRule(r, path);
  }
  if (rule.Not !== undefined) checkChoiceRule(rule.Not, path);
};

const checkMachine = (machine: unknown, where: string, boundArns: ReadonlySet<string>): void => {
  const self = where === '' ? '(top level)' : where;
  if (!isObject(machine) || !isObject(machine.States)) {
    throw new UnsupportedLocallyError(self, 'a definition without States');
  }
  if (machine.QueryLanguage === 'JSONata') throw new UnsupportedLocallyError(self, 'QueryLanguage JSONata');
  for (const [name, state] of Object.entries(machine.States)) {
    const path = where === '' ? name : `${where}/${name}`;
    if (!isObject(state)) throw new UnsupportedLocallyError(path, 'a state that is not an object');
    if (state.QueryLanguage === 'JSONata') throw new UnsupportedLocallyError(path, 'QueryLanguage JSONata');
    for (const field of UNSUPPORTED_FIELDS) {
      if (field in state) throw new UnsupportedLocallyError(path, field);
    }
    if (state.Type === 'Task' && !(typeof state.Resource === 'string' && boundArns.has(state.Resource))) {
      throw new UnsupportedLocallyError(
        path,
        `Resource ${JSON.stringify(state.Resource)}, which is not a bound Lambda ARN`,
      );
    }
    if (state.Type === 'Choice' && Array.isArray(state.Choices)) {
      for (const rule of state.Choices) checkChoiceRule(rule, path);
    }
    if (state.Type === 'Map') {
      for (const key of ['ItemProcessor', 'Iterator'] as const) {
        if (state[key] !== undefined) checkMachine(state[key], `${path}/${key}`, boundArns);
      }
    }
    if (state.Type === 'Parallel') {
      const branches = Array.isArray(state.Branches) ? state.Branches : [];
      branches.forEach((b, i) => {
        checkMachine(b, `${path}/Branches[${i}]`, boundArns);
      });
    }
  }
};

/**
 * Throws `UnsupportedLocallyError` naming the state (path through Map/Parallel nesting) when the
 * definition uses anything the local interpreter cannot execute the way AWS does.
 */
export const assertLocallyExecutable = (definition: unknown, boundArns: Iterable<string>): void => {
  checkMachine(definition, '', new Set(boundArns));
};
