import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * No import circles in the shipped code (shared/, functions/, infra/), type-only imports and lazy
 * `require`s included: a circle through types still ties two files together (one cannot be read, moved
 * or tested without the other). The TypeScript scanner lists each file's imports; Tarjan's algorithm
 * finds the strongly connected components.
 */
const ROOT = resolve(__dirname, '../..');
const DIRS = ['shared', 'functions', 'infra'];

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });

const resolveImport = (from: string, spec: string): string | null => {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return null;
};

const importGraph = (): Map<string, string[]> => {
  const graph = new Map<string, string[]>();
  for (const file of DIRS.flatMap((d) => sourceFiles(join(ROOT, d)))) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles
      .map((f) => resolveImport(file, f.fileName))
      .filter((t): t is string => t !== null);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
};

/** Strongly connected components with more than one file, or a file importing itself. */
const circles = (graph: Map<string, string[]>): string[][] => {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found.map((c) => c.map((f) => relative(ROOT, f)).sort());
};

test('the import graph of shared/, functions/ and infra/ has no circles', () => {
  const graph = importGraph();
  expect(graph.size).toBeGreaterThan(100);
  expect(circles(graph)).toEqual([]);
});

test('the check finds a circle, type-only imports included', () => {
  const a = join(ROOT, 'a.ts');
  const b = join(ROOT, 'b.ts');
  const c = join(ROOT, 'c.ts');
  const graph = new Map([
    [a, [b]],
    [b, [a, c]],
    [c, []],
  ]);
  expect(circles(graph)).toEqual([['a.ts', 'b.ts']]);
  const imports = ts.preProcessFile("import type { X } from './b';\nconst y = require('./c');", true, true);
  expect(imports.importedFiles.map((f) => f.fileName)).toEqual(['./b', './c']);
});
