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
let bundles: { dir: string; code: string; hasMap: boolean }[] = [];

beforeAll(() => {
  deployed = deployedDefinitionString({
    inspectAssembly: (dir) => {
      bundles = readdirSync(dir)
        .filter((d) => d.startsWith('asset.') && existsSync(path.join(dir, d, 'index.mjs')))
        .map((d) => ({
          dir: d,
          code: readFileSync(path.join(dir, d, 'index.mjs'), 'utf8'),
          hasMap: existsSync(path.join(dir, d, 'index.mjs.map')),
        }));
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

  it('comes with one ESM bundle per step, each with a source map and the createRequire shim', () => {
    expect(bundles).toHaveLength(ARCHIVER_STEPS.length);
    for (const b of bundles) {
      expect(b.hasMap).toBe(true);
      expect(b.code.startsWith("import { createRequire as topLevelCreateRequire } from 'node:module';")).toBe(
        true,
      );
      expect(b.code).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
    }
  });
});
