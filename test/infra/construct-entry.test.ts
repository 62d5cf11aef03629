import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The CDK entry (`job-details-archive/cdk`) is loaded by a CDK app at synth time: it must not load a
 * runtime library the functions bring with them (Powertools and the AWS SDK are bundled into the
 * Lambda code, and a CDK app — a Python one through jsii included — need not install them).
 */
test('loading the construct entry loads no Powertools or AWS SDK module', () => {
  const root = resolve(__dirname, '../..');
  const script = [
    "require('./infra/construct/index.ts');",
    "const loaded = Object.keys(require.cache).filter((k) => k.includes('@aws-lambda-powertools') || k.includes('@aws-sdk/'));",
    'process.stdout.write(JSON.stringify(loaded));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(JSON.parse(out)).toEqual([]);
});
