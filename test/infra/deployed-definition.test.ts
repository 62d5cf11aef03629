import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ARCHIVER_STEPS } from '../../infra/construct/step-names';
import { deployedDefinitionString, localDefinitionString } from '../../infra/local/runner';

/**
 * The definition `cdk deploy` ships — the app exactly as infra/construct/app.ts builds it: real esbuild
 * bundling, cdk-nag on — is byte-for-byte the one the local runner executes (synthesized without
 * bundling). The only synth with bundling in the suite; it also checks what the bundler produced.
 */
let deployed: string;
/** Assets holding a step's entry, with every file in them. */
let bundles: { dir: string; files: string[]; heads: string[] }[] = [];
let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('.'));

beforeAll(() => {
  deployed = deployedDefinitionString({
    inspectAssembly: (dir) => {
      bundles = readdirSync(dir)
        .filter((d) => d.startsWith('asset.') && existsSync(path.join(dir, d, 'plan.mjs')))
        .map((d) => {
          const files = filesUnder(path.join(dir, d));
          const heads = files.map((f) => readFileSync(path.join(dir, d, f), 'utf8').slice(0, 80));
          return { dir: d, files, heads };
        });
      const stack = readdirSync(dir).find((f) => f.endsWith('.template.json'));
      template = JSON.parse(readFileSync(path.join(dir, stack ?? ''), 'utf8'));
    },
  });
});

describe('deployed vs local definition', () => {
  it('is byte-for-byte the same ASL', () => {
    const local = localDefinitionString();
    expect(deployed).toBe(local);
    expect(JSON.parse(deployed).States.Plan.Resource).toBe(
      'arn:aws:lambda:us-east-1:123456789012:function:jda-plan',
    );
  });

  it('ships ONE ESM bundle for every step (shared chunks, no source maps), each with the createRequire shim', () => {
    expect(bundles).toHaveLength(1);
    const [bundle] = bundles;
    if (!bundle) throw new Error('no bundle');
    expect(bundle.files.filter((f) => f.endsWith('.map'))).toEqual([]);
    for (const step of ARCHIVER_STEPS) expect(bundle.files).toContain(`${step}.mjs`);
    expect(bundle.files.some((f) => f.startsWith('chunks/'))).toBe(true);
    for (const head of bundle.heads) {
      expect(head.startsWith("import { createRequire as topLevelCreateRequire } from 'node:module';")).toBe(
        true,
      );
    }
  });

  it('every function deploys that one asset, with its step as the handler', () => {
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions.map((f) => f.Properties.Handler).sort()).toEqual(
      ARCHIVER_STEPS.map((s) => `${s}.handler`).sort(),
    );
    const keys = new Set(
      functions.map((f) => JSON.stringify((f.Properties.Code as { S3Key: unknown }).S3Key)),
    );
    expect(keys.size).toBe(1);
    expect([...keys][0]).toContain(bundles[0]?.dir.replace('asset.', ''));
  });
});
