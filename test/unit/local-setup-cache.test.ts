/**
 * The checkout's cache of the default local setup (infra/local/setup-cache.ts): synthesized once per
 * state of the sources, synthesized afresh after any edit, and equal to a fresh synthesis.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localSetup } from '../../infra/local/runner';
import { cachedDefaultSetup } from '../../infra/local/setup-cache';
import { synthesizedLocalSetup } from '../../infra/local/synth';

const setupOf = (definition: string) => ({
  definition,
  timeoutMs: {} as never,
  memoryMb: {} as never,
});

it('synthesizes once per state of the sources, again after an edit, and never reads a stale one', () => {
  const root = mkdtempSync(join(tmpdir(), 'jda-setup-cache-'));
  try {
    for (const d of ['infra/construct', 'shared', 'functions']) mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, 'infra/construct/a.ts'), 'export const a = 1;');
    writeFileSync(join(root, 'shared/b.ts'), 'export const b = 1;');
    writeFileSync(join(root, 'functions/c.ts'), 'export const c = 1;');
    writeFileSync(join(root, 'package-lock.json'), '{}');
    writeFileSync(join(root, 'cdk.json'), '{}');
    let synthesized = 0;
    const synth = (v: string) => () => {
      synthesized++;
      return setupOf(v);
    };
    expect(cachedDefaultSetup(root, synth('one')).definition).toBe('one');
    expect(cachedDefaultSetup(root, synth('two')).definition).toBe('one'); // from the cache
    expect(synthesized).toBe(1);
    writeFileSync(join(root, 'shared/b.ts'), 'export const b = 2;');
    expect(cachedDefaultSetup(root, synth('three')).definition).toBe('three');
    expect(synthesized).toBe(2);
    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}');
    expect(cachedDefaultSetup(root, synth('four')).definition).toBe('four');
    expect(readdirSync(join(root, 'node_modules/.cache/job-details-archive'))).toHaveLength(3);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

it("the checkout's default setup is a fresh synthesis of the construct", () => {
  expect(localSetup()).toEqual(synthesizedLocalSetup());
});
