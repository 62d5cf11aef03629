import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { emptyMemberOf, memberOfLength, splitMembers } from '../archive/steps/run-files/gzip-members';

/**
 * Pure scrubbing of run scratch (`job-details-runs/{run}/`, docs/erasure.md "Run scratch") of
 * forgotten shops: no I/O here (forget-scratch.ts and run-scratch.ts do the S3 side). Structured files
 * lose the shops' entries (their jobs are never archived); free text (causes, reports' shop fields)
 * gets a fixed pseudonym. Counts stay as they are: they are counts, not names.
 */

/** `forgotten-shop:{first 12 hex of sha256(shopId)}`: stable, so two reports of one shop still match. */
export const shopPseudonym = (shopId: string): string =>
  `forgotten-shop:${createHash('sha256').update(shopId, 'utf8').digest('hex').slice(0, 12)}`;

/**
 * Finds the forgotten shops' ids in text, as whole ids: `acme.myshopify.com` inside
 * `big-acme.myshopify.com` is another shop, but a sentence's closing `.` or a key's `/` ends one.
 * Shop ids are `[A-Za-z0-9._-]` (ids.ts), so none needs escaping in JSON and none holds a `/`.
 */
export class ShopMatcher {
  readonly shops: ReadonlySet<string>;
  private readonly re: RegExp;

  constructor(shops: Iterable<string>) {
    this.shops = new Set(shops);
    if (this.shops.size === 0) throw new RangeError('ShopMatcher needs at least one shop');
    const alts = [...this.shops]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.]/g, '\\.'))
      .join('|');
    this.re = new RegExp(`(?<![A-Za-z0-9._-])(?:${alts})(?![A-Za-z0-9_-]|\\.[A-Za-z0-9])`, 'g');
  }

  names(text: string): boolean {
    this.re.lastIndex = 0;
    return this.re.test(text);
  }

  /** Every occurrence replaced by its shop's pseudonym. */
  redact(text: string): string {
    return text.replace(this.re, (s) => shopPseudonym(s));
  }

  /** Every occurrence masked by as many `*` (byte offsets kept: ids are ASCII). */
  mask(text: string): string {
    return text.replace(this.re, (s) => '*'.repeat(s.length));
  }

  /** Every occurrence replaced by one `*`: shorter text, which deflates at least as small in practice. */
  cut(text: string): string {
    return text.replace(this.re, '*');
  }

  isShop(v: unknown): boolean {
    return typeof v === 'string' && this.shops.has(v);
  }
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every string (and object key) of a JSON value with the shops redacted. */
export const redactJson = (v: unknown, m: ShopMatcher): unknown => {
  if (typeof v === 'string') return m.redact(v);
  if (Array.isArray(v)) return v.map((x) => redactJson(x, m));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [m.redact(k), redactJson(x, m)]));
  return v;
};

const withoutShops = (v: unknown, m: ShopMatcher, field = 'shopId'): unknown =>
  Array.isArray(v) ? v.filter((x) => !(isObj(x) && m.isShop(x[field]))) : v;

/** A group result (`{group: {shopId, month}, …}`) of a forgotten shop. */
const isShopResult = (r: unknown, m: ShopMatcher): boolean =>
  isObj(r) && isObj(r.group) && m.isShop(r.group.shopId);

const withoutResults = (v: unknown, m: ShopMatcher): unknown =>
  Array.isArray(v) ? v.filter((r) => !isShopResult(r, m)) : v;

/** A planned batch (a batches.jsonl line, a child execution's `batch`) without the shops' groups. */
const batchWithout = (b: unknown, m: ShopMatcher): { batch: unknown; ranges: Array<[number, number]> } => {
  if (!isObj(b) || !Array.isArray(b.groups)) return { batch: b, ranges: [] };
  const ranges: Array<[number, number]> = [];
  const groups = b.groups.filter((g) => {
    if (!(isObj(g) && m.isShop(g.shopId))) return true;
    const r = g.jobsRange;
    if (Array.isArray(r) && typeof r[0] === 'number' && typeof r[1] === 'number') ranges.push([r[0], r[1]]);
    return false;
  });
  return { batch: { ...b, groups }, ranges };
};

/**
 * A plan page's batches (JSONL): the shops' groups removed, a batch left with none dropped (its line
 * goes; the other batches keep their numbers). Returns the byte ranges the removed groups had in the
 * page's planned jobs, which `scrubPlannedJobs` then empties.
 */
export const scrubBatchesJsonl = (
  text: string,
  m: ShopMatcher,
): { text: string; ranges: Array<[number, number]> } => {
  const ranges: Array<[number, number]> = [];
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const { batch, ranges: r } = batchWithout(JSON.parse(line) as unknown, m);
    ranges.push(...r);
    if (r.length > 0 && isObj(batch) && Array.isArray(batch.groups) && batch.groups.length === 0) continue;
    lines.push(JSON.stringify(redactJson(batch, m)));
  }
  return { text: lines.map((l) => `${l}\n`).join(''), ranges };
};

/**
 * A plan page's planned jobs (one gzip member per group, run-files/plan-files.ts) without the
 * forgotten groups: each member overlapping one of their byte ranges becomes a member of the same
 * length holding nothing, so every other group's `jobsRange` still addresses its own member; any
 * other mention of the shops (free text of another shop's job) is masked and that member recompressed
 * to its old length. Masking with as many `*` often deflates a few bytes longer than the original (a
 * `….myshopify.com` id was a back-reference to another id holding it: an error message naming
 * both shops lost its member in 13 % to 82 % of our samples), so a mention cut to one `*` is tried next, then
 * every string naming the shops replaced by `*` (none of 500 such members failed all three). A
 * member that fits none is emptied, as are bytes that are no gzip member: an erasure leaves
 * nothing behind (a redrive reading an emptied member of another shop fails naming it: its count
 * of jobs is short). Idempotent: a second pass finds nothing to change.
 */
export const scrubPlannedJobs = (
  bytes: Buffer,
  ranges: ReadonlyArray<readonly [number, number]>,
  m: ShopMatcher,
): Buffer => {
  const { members, rest } = splitMembers(bytes);
  const out: Buffer[] = [];
  const overlaps = (start: number, end: number) => ranges.some(([s, e]) => s < end && start < e);
  const emptied = (length: number) => emptyMemberOf(length) ?? Buffer.alloc(length, 0x20);
  for (const { start, end, body } of members) {
    const member = bytes.subarray(start, end);
    if (overlaps(start, end)) {
      out.push(body.length === 0 ? member : emptied(end - start));
      continue;
    }
    const text = body.toString('utf8');
    // The first rewrite that recompresses to the member's length: masked, cut, whole strings blanked.
    const ofLength = (rewrite: () => string) => memberOfLength(Buffer.from(rewrite(), 'utf8'), end - start);
    if (!m.names(text)) out.push(member);
    else
      out.push(
        ofLength(() => m.mask(text)) ??
          ofLength(() => m.cut(text)) ??
          ofLength(() => blankLines(text, m)) ??
          emptied(end - start),
      );
  }
  if (rest < bytes.length) out.push(emptied(bytes.length - rest));
  return Buffer.concat(out);
};

/** JSON lines with every string that names a shop replaced by `*` (a line that is not JSON: cut). */
const blankLines = (text: string, m: ShopMatcher): string =>
  text
    .split('\n')
    .map((line) => {
      if (!m.names(line)) return line;
      try {
        return JSON.stringify(
          JSON.parse(line, (_k, v: unknown) => (typeof v === 'string' && m.names(v) ? '*' : v)),
        );
      } catch {
        return m.cut(line);
      }
    })
    .join('\n');

/** One entry of a Map run result file: the child's batch and results without the shops' groups. */
const scrubResultEntry = (e: unknown, m: ShopMatcher): unknown => {
  if (!isObj(e)) return e;
  const out: Record<string, unknown> = { ...e };
  if (typeof e.Input === 'string') {
    const input = JSON.parse(e.Input) as unknown;
    if (isObj(input) && isObj(input.batch)) {
      const { batch, ranges } = batchWithout(input.batch, m);
      // A batch of the forgotten shops alone: the whole child goes.
      if (ranges.length > 0 && isObj(batch) && Array.isArray(batch.groups) && batch.groups.length === 0)
        return null;
      out.Input = JSON.stringify({ ...input, batch });
    }
  }
  if (typeof e.Output === 'string') {
    const output = JSON.parse(e.Output) as unknown;
    if (isObj(output) && Array.isArray(output.results))
      out.Output = JSON.stringify({ ...output, results: output.results.filter((r) => !isShopResult(r, m)) });
  }
  return out;
};

/** Where in a run's scratch a key is (relative to `job-details-runs/{run}/`), for the structured scrubs. */
const STRUCTURED: ReadonlyArray<[RegExp, (v: unknown, m: ShopMatcher) => unknown]> = [
  // A Map run's result file: JSON array of child executions (infra/local/distributed-map.ts header).
  [
    /^results\/\d+\/[^/]+\/(SUCCEEDED|FAILED|PENDING)_\d+\.json$/,
    (v, m) => (Array.isArray(v) ? v.map((e) => scrubResultEntry(e, m)).filter((e) => e !== null) : v),
  ],
  // A page's group results (run-files/page-results.ts).
  [/^pages\/\d+\.json\.gz$/, (v, m) => (isObj(v) ? { ...v, results: withoutResults(v.results, m) } : v)],
  // Plan-time quarantines of a page (run-files/findings.ts; group findings are keyed by shop: deleted).
  [
    /^findings\/\d+\/plan-quarantined\.json$/,
    (v, m) => (isObj(v) ? { ...v, items: withoutShops(v.items, m) } : v),
  ],
  // Retry entries carried through the run (plan/watermark.ts carriedKey).
  [/^retry-carried\.json$/, (v, m) => (isObj(v) ? { ...v, retry: withoutShops(v.retry, m) } : v)],
  // The report: the shops' jobs leave its lists (quarantined, delete errors); its group-level entries
  // (failed groups, overdue requests) keep their place under the pseudonym; its counts stay.
  [
    /^report\.json$/,
    (v, m) =>
      isObj(v)
        ? {
            ...v,
            ...(Array.isArray(v.jobsQuarantined)
              ? { jobsQuarantined: withoutShops(v.jobsQuarantined, m) }
              : {}),
            ...(Array.isArray(v.deleteErrorList)
              ? { deleteErrorList: withoutShops(v.deleteErrorList, m) }
              : {}),
          }
        : v,
  ],
];

/** What to do with one scratch object. */
export type ScrubOutcome =
  | { readonly action: 'keep' }
  | { readonly action: 'delete' }
  | { readonly action: 'put'; readonly bytes: Buffer };

const GZIP = (b: Buffer): boolean => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** Whether a key (relative to its run's prefix) or body names a shop (gzip bodies read through). */
export const scratchNames = (rel: string, bytes: Buffer, m: ShopMatcher): boolean =>
  m.names(rel) || m.names((GZIP(bytes) ? gunzipSync(bytes) : bytes).toString('utf8'));

/**
 * Scrubs one scratch object (`rel`: its key below `job-details-runs/{run}/`). A key naming a shop
 * (a group's findings document) is deleted: the whole document is the shop's. JSON and JSONL bodies
 * are parsed, the known formats lose the shops' entries, every string left is redacted and the
 * result re-serialized as the writers do (JSON.stringify, no spaces); anything else is text, redacted.
 * A planned-jobs file keeps its members' lengths (`scrubPlannedJobs`; only its page's batches say
 * which members are the shop's).
 */
export const scrubScratchObject = (rel: string, bytes: Buffer, m: ShopMatcher): ScrubOutcome => {
  if (m.names(rel)) return { action: 'delete' };
  if (PLANNED_JOBS.test(rel)) {
    const out = scrubPlannedJobs(bytes, [], m);
    return out.equals(bytes) ? { action: 'keep' } : { action: 'put', bytes: out };
  }
  const gz = GZIP(bytes);
  const plain = gz ? gunzipSync(bytes) : bytes;
  const text = plain.toString('utf8');
  if (!m.names(text)) return { action: 'keep' };
  const out = Buffer.from(scrubText(rel, text, m), 'utf8');
  return { action: 'put', bytes: gz ? gzipSync(out) : out };
};

const PLANNED_JOBS = /^plan\/\d+\/jobs\.jsonl\.gz$/;

/** JSON (or JSON lines) with the structured scrub of its format; text that is not JSON, redacted. */
const scrubText = (rel: string, text: string, m: ShopMatcher): string => {
  const json = (t: string, structured?: (v: unknown, m: ShopMatcher) => unknown): string => {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      return m.redact(t);
    }
    try {
      if (structured) v = structured(v, m);
    } catch {
      // A file not in its format (nested JSON that is not): every string of it is still redacted.
    }
    return JSON.stringify(redactJson(v, m));
  };
  if (rel.endsWith('/batches.jsonl')) {
    try {
      return scrubBatchesJsonl(text, m).text;
    } catch {
      return m.redact(text);
    }
  }
  if (rel.endsWith('.jsonl'))
    return text
      .split('\n')
      .map((l) => (l === '' ? l : json(l)))
      .join('\n');
  return json(text, STRUCTURED.find(([re]) => re.test(rel))?.[1]);
};
