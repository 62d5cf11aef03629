/**
 * `npx tsx test/bench/archive/cost-docs.ts` — regenerates the documented `jobarchive cost` workloads
 * (docs/bench/cost-*.txt) and the generated sections of docs/cost.md from the measured figures in
 * docs/bench (steady-year.json, archive.json). Run it after `npm run bench:archive -- --steady-year
 * --out docs/bench`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseFlags } from '../../../infra/cli/args';
import {
  costCommand,
  costSpec,
  measuredFrom,
  parseCostOptions,
  paysTable,
  sizeText,
} from '../../../infra/cli/cost';
import { deploymentBills, wherePays } from '../../../infra/cli/cost-model';
import { memoryOutput } from '../../../infra/cli/output';
import { DEFAULT_PRICES } from '../../../infra/cli/prices';

const ROOT = resolve(__dirname, '../../..');
const STEADY = 'docs/bench/steady-year.json';
const SCENARIOS = 'docs/bench/archive.json';

interface Doc {
  readonly file: string;
  readonly title: string;
  readonly args: string[];
}

const DESIGN = ['--jobs-per-month', '100000', '--objects-per-job', '3.43', '--bytes-per-job', '4310'];
const DOCS: Doc[] = [
  {
    file: 'docs/bench/cost-design.txt',
    title:
      "the design's (seeds/000): 100,000 jobs a month, 3.4 objects and 4.3 KB per job, 24 months, Glacier IR (steady-year figures)",
    args: ['--from-report', STEADY, ...DESIGN],
  },
  {
    file: 'docs/bench/cost-design-60-months.txt',
    title: "the design's kept 60 months in Deep Archive (steady-year figures)",
    args: ['--from-report', STEADY, ...DESIGN, '--retention-months', '60', '--storage-class', 'DEEP_ARCHIVE'],
  },
  {
    file: 'docs/bench/cost-large-shops.txt',
    title:
      'large shops: 1,000,000 jobs a month in 15,000-job shop-months, 12 months, Flexible Retrieval (scenario month-15000: one run, no re-planning)',
    args: [
      '--from-report',
      SCENARIOS,
      '--scenario',
      'month-15000',
      '--jobs-per-month',
      '1000000',
      '--storage-class',
      'GLACIER',
      '--retention-months',
      '12',
    ],
  },
  {
    file: 'docs/bench/cost-long-tail.txt',
    title:
      'the long tail: 100,000 jobs a month from shops with 1–3 jobs, 24 months, Glacier IR (scenario fleet-300: one run, no re-planning)',
    args: ['--from-report', SCENARIOS, '--scenario', 'fleet-300', '--jobs-per-month', '100000'],
  },
];

const usd = (x: number) => (x >= 100 ? `$${Math.round(x).toLocaleString('en-US')}` : `$${x.toFixed(2)}`);

const replaceSection = (text: string, name: string, body: string[]): string => {
  const open = `<!-- generated:${name} -->`;
  const close = `<!-- /generated:${name} -->`;
  const block = [open, ...body, close].join('\n');
  const at = text.indexOf(open);
  if (at >= 0) return text.slice(0, at) + block + text.slice(text.indexOf(close) + close.length);
  return text.replace(`GENERATED-${name.toUpperCase()}`, block);
};

const main = async () => {
  process.chdir(ROOT);
  const rows: string[] = [
    '| workload | command | one cohort over its life: archive (without fixed costs) vs the floor, hot | archive ÷ floor, without fixed | the archival alone ÷ floor (lookups out) · a lookup ÷ its minimum | payback age |',
    '|---|---|---|---|---|---|',
  ];
  for (const d of DOCS) {
    const io = memoryOutput();
    const r = await costCommand(parseCostOptions(parseFlags(costSpec, d.args)), io);
    writeFileSync(resolve(ROOT, d.file), `${io.stdout.join('\n')}\n`);
    const t = r.cohortTotal;
    // A workload that never pays even at the floor says so, and why.
    const floorNever = r.floor.total > t.hot;
    rows.push(
      `| ${d.title} | \`jobarchive cost ${d.args.join(' ')}\` | archive ${usd(t.archive)} (${usd(r.archiveWithoutFixed)}) vs floor ${usd(r.floor.total)}, hot ${usd(t.hot)} (lifecycle ${usd(t.lifecycle)}) | ${r.ratioToFloor.toFixed(2)}× | ${r.ratioArchivalToFloor.toFixed(2)}× · ${r.lookups.ratioToFloor.toFixed(2)}× | ${r.breakEvenVsHot ?? (floorNever ? 'never — not even at the floor: its objects are so small that one GET each costs more than the Standard storage archiving saves over this horizon' : 'never')} |`,
    );
  }
  const design = parseCostOptions(parseFlags(costSpec, ['--from-report', STEADY, ...DESIGN]));
  const m = measuredFrom(STEADY);
  const w = {
    ...design.workload,
    objectsPerJob: design.workload.objectsPerJob ?? m.objectsPerJob,
    bytesPerJob: design.workload.bytesPerJob ?? m.bytesPerJob,
  };
  const pays = wherePays(w, m, DEFAULT_PRICES);
  const bills = deploymentBills(w, m, DEFAULT_PRICES);
  const billRows = [
    '| jobs a month | hot | archive (fixed costs included) | of it fixed | floor | archive ÷ floor |',
    '|---|---|---|---|---|---|',
    ...bills.map(
      (b) =>
        `| ${b.jobsPerMonth.toLocaleString('en-US')} | ${usd(b.hot)} | ${usd(b.archive)} | ${usd(b.fixed)} | ${usd(b.floor)} | ${(b.archive / b.floor).toFixed(2)}× |`,
    ),
  ];
  const objectBytes = w.bytesPerJob / w.objectsPerJob;
  const file = resolve(ROOT, 'docs/cost.md');
  let text = readFileSync(file, 'utf8');
  text = replaceSection(text, 'table', [
    `For the design's 100,000 jobs a month of ${w.objectsPerJob} objects (theirs: ${sizeText(objectBytes)} each), steady-year figures, 100 lookups a month:`,
    '',
    ...paysTable(pays),
  ]);
  text = replaceSection(text, 'workloads', [
    'Regenerated by `npx tsx test/bench/archive/cost-docs.ts` (outputs in `docs/bench/cost-*.txt`):',
    '',
    ...rows,
  ]);
  text = replaceSection(text, 'deployment', [
    `The whole deployment's bill a month once every cohort is kept (the design's objects and bytes per job, 24 months in Glacier IR, steady-year figures, \`jobarchive cost\` prints it for any workload):`,
    '',
    ...billRows,
  ]);
  writeFileSync(file, text);
  // The README carries the same where-archiving-pays table.
  const readme = resolve(ROOT, 'README.md');
  writeFileSync(
    readme,
    replaceSection(readFileSync(readme, 'utf8'), 'pays', [
      `For the design's 100,000 jobs a month of ${w.objectsPerJob} objects (theirs: ${sizeText(objectBytes)} each), steady-year figures, 100 lookups a month:`,
      '',
      ...paysTable(pays),
    ]),
  );
  console.log(rows.join('\n'));
  console.log(billRows.join('\n'));
  console.log(paysTable(pays).join('\n'));
};

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
