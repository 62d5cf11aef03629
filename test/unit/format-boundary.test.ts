import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * One format, one place (issue 32): code outside shared/archive/format/ imports the format only through
 * its entry (shared/archive/format/index.ts), never a file of the folder, and no code outside it spells
 * a version string of the archive's formats — version.ts is the one version dispatch. A part-format
 * change then touches the folder, its spec and its vectors, nothing else.
 */
const ROOT = resolve(__dirname, '../..');
const FORMAT = join(ROOT, 'shared/archive/format');
const ENTRY = join(FORMAT, 'index.ts');
const DIRS = ['shared', 'functions', 'infra', 'bin', 'test'];

const sourceFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
        return /\.(ts|cjs|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
      })
    : [];

const resolveImport = (from: string, spec: string): string | null => {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')])
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  return null;
};

const outside = DIRS.flatMap((d) => sourceFiles(join(ROOT, d))).filter((f) => !f.startsWith(`${FORMAT}/`));

/** Every import (static, dynamic, require, type-only) of `file` that lands inside the folder but not on its entry. */
const internalImports = (file: string, text: string): string[] =>
  ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => {
      const target = resolveImport(file, spec);
      return target?.startsWith(`${FORMAT}/`) === true && target !== ENTRY;
    });

/** The archive's durable formats, as version strings: `job-details-archive/part@1.0`, `…/index@5`. */
const VERSION_STRING = /job-details-archive\/(part|index|shared-index|intent|docfilter|pending|verified)@\d/;

test('code outside shared/archive/format/ imports it only through its entry', () => {
  const offenders = outside.flatMap((file) =>
    internalImports(file, readFileSync(file, 'utf8')).map((spec) => `${relative(ROOT, file)} → ${spec}`),
  );
  expect(offenders).toEqual([]);
  expect(outside.length).toBeGreaterThan(100);
});

test('no shipped code outside the folder knows a format version string', () => {
  const shipped = outside.filter((f) => !relative(ROOT, f).startsWith('test/'));
  const offenders = shipped.filter((file) => VERSION_STRING.test(readFileSync(file, 'utf8')));
  expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
});

test('the checks see what they guard (an internal import and a version string are caught)', () => {
  const file = join(ROOT, 'shared/reader/reader.ts');
  expect(internalImports(file, "import { parseMonthIndex } from '../archive/format/month-index';")).toEqual([
    '../archive/format/month-index',
  ]);
  expect(internalImports(file, "import type { MonthIndex } from '../archive/format';")).toEqual([]);
  expect(internalImports(file, "const m = require('../archive/format/keys');")).toEqual([
    '../archive/format/keys',
  ]);
  expect(VERSION_STRING.test("if (f === 'job-details-archive/index@5')")).toBe(true);
  expect(VERSION_STRING.test("'job-details-archive/watermark@1'")).toBe(false);
});
