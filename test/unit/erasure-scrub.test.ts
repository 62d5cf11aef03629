import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { PageGroup } from '../../shared/archive/steps/plan/plan-rows';
import { layoutPlanFiles } from '../../shared/archive/steps/run-files/plan-files';
import type { PlannedBatch, PlannedJob } from '../../shared/archive/steps/types';
import {
  redactJson,
  ShopMatcher,
  scratchNames,
  scrubBatchesJsonl,
  scrubPlannedJobs,
  scrubScratchObject,
  shopPseudonym,
} from '../../shared/erasure/scrub';

const GONE = 'acme.myshopify.com';
const OTHER = 'big-acme.myshopify.com';
const m = new ShopMatcher([GONE]);
const PSEUDO = shopPseudonym(GONE);

const job = (id: string, month: string): PlannedJob => ({
  job_id: id,
  status: 'COMPLETED',
  completed_at: `${month}-03T10:00:00.000Z`,
  created_at: null,
  started_at: null,
  job_type: 'sync',
  platform: null,
  error_message: null,
  retry_count: null,
  is_internal: null,
  initiator_user_id: null,
  estimated_time_minutes: null,
  ttl: null,
});

const lines = (b: Buffer): string[] =>
  gunzipSync(b)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
const parsed = (o: ReturnType<typeof scrubScratchObject>): unknown => {
  if (o.action !== 'put') throw new Error(`expected a rewrite, got ${o.action}`);
  return JSON.parse(o.bytes.toString('utf8'));
};

describe('run scratch scrub (pure)', () => {
  it('the pseudonym is fixed: forgotten-shop: and 12 hex of the id’s SHA-256', () => {
    const hex = createHash('sha256').update(GONE, 'utf8').digest('hex');
    expect(PSEUDO).toBe(`forgotten-shop:${hex.slice(0, 12)}`);
    expect(shopPseudonym(GONE)).toBe(PSEUDO);
    expect(shopPseudonym(OTHER)).not.toBe(PSEUDO);
  });

  it('matches whole shop ids only: not inside another shop’s id, but before a sentence’s period or a /', () => {
    expect(m.names(`shop ${GONE} failed`)).toBe(true);
    expect(m.names(`shop ${GONE}.`)).toBe(true);
    expect(m.names(`findings/0/${GONE}/2026-02/quarantined.json`)).toBe(true);
    expect(m.names(`"shopId":"${GONE}"`)).toBe(true);
    expect(m.names(OTHER)).toBe(false);
    expect(m.names(`${GONE}.eu`)).toBe(false);
    expect(m.names(`${GONE}-2`)).toBe(false);
    expect(m.redact(`${GONE} and ${OTHER}: ${GONE}.`)).toBe(`${PSEUDO} and ${OTHER}: ${PSEUDO}.`);
    expect(m.mask(`[${GONE}]`)).toBe(`[${'*'.repeat(GONE.length)}]`);
    expect(() => new ShopMatcher([])).toThrow(RangeError);
  });

  it('redacts every string and key of a JSON value, nothing else', () => {
    expect(redactJson({ [GONE]: [GONE, `x ${GONE}`, 3, null, { shopId: OTHER }] }, m)).toEqual({
      [PSEUDO]: [PSEUDO, `x ${PSEUDO}`, 3, null, { shopId: OTHER }],
    });
  });

  it('a plan page: the shop’s groups leave the batches, its members are emptied at their length, every other range still inflates to its own lines', () => {
    const groups: PageGroup[] = [
      { shopId: OTHER, month: '2026-02', jobs: [job('o1', '2026-02'), job('o2', '2026-02')] },
      { shopId: GONE, month: '2026-02', jobs: [job('g1', '2026-02'), job('g2', '2026-02')] },
      { shopId: GONE, month: '2026-03', jobs: [job('g3', '2026-03')] },
      { shopId: 'third', month: '2026-03', jobs: [job('t1', '2026-03')] },
    ];
    // Two groups a batch: the second batch holds the shop's March group and the third shop's.
    const files = layoutPlanFiles('run-1', 0, groups, { batchGroups: 2, batchJobs: 100 });
    expect(files.batches).toHaveLength(2);
    const { text, ranges } = scrubBatchesJsonl(files.batchesBody.toString('utf8'), m);
    expect(ranges).toHaveLength(2);
    const kept = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as PlannedBatch);
    expect(kept.map((b) => [b.batch, b.groups.map((g) => g.shopId)])).toEqual([
      [0, [OTHER]],
      [1, ['third']],
    ]);
    const jobs = scrubPlannedJobs(files.jobsBody, ranges, m);
    expect(jobs.length).toBe(files.jobsBody.length);
    // The whole file still inflates (gzip -dc): the other shops' lines only.
    expect(
      gunzipSync(jobs)
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as PlannedJob).job_id),
    ).toEqual(['o1', 'o2', 't1']);
    for (const g of kept.flatMap((b) => b.groups)) {
      const lines = gunzipSync(jobs.subarray(g.jobsRange[0], g.jobsRange[1]))
        .toString('utf8')
        .split('\n')
        .slice(0, -1);
      expect(lines.map((l) => (JSON.parse(l) as PlannedJob).job_id)).toEqual(
        groups.find((x) => x.shopId === g.shopId)?.jobs.map((j) => j.job_id),
      );
    }
    // Each of the shop's ranges is one member holding nothing.
    for (const [start, end] of ranges) expect(gunzipSync(jobs.subarray(start, end)).length).toBe(0);
    // Again: nothing more to do.
    expect(scrubBatchesJsonl(text, m).ranges).toEqual([]);
    expect(scrubPlannedJobs(jobs, ranges, m).equals(jobs)).toBe(true);
    expect(scrubScratchObject('plan/0/jobs.jsonl.gz', jobs, m)).toEqual({ action: 'keep' });
  });

  it('another shop’s job that mentions the shop in free text is masked, its member rewritten at the same length', () => {
    const groups: PageGroup[] = [
      {
        shopId: OTHER,
        month: '2026-02',
        jobs: [{ ...job('o1', '2026-02'), error_message: `see ${GONE}` }, job('o2', '2026-02')],
      },
      { shopId: 'third', month: '2026-02', jobs: [job('t1', '2026-02')] },
    ];
    const files = layoutPlanFiles('run-1', 0, groups, { batchGroups: 2, batchJobs: 100 });
    const out = scrubScratchObject('plan/0/jobs.jsonl.gz', files.jobsBody, m);
    if (out.action !== 'put') throw new Error('expected a rewrite');
    expect(out.bytes.length).toBe(files.jobsBody.length);
    const [first, second] = files.batches[0]?.groups ?? [];
    if (!first || !second) throw new Error('expected two groups');
    const text = gunzipSync(out.bytes.subarray(first.jobsRange[0], first.jobsRange[1])).toString('utf8');
    expect(text).toContain(`see ${'*'.repeat(GONE.length)}`);
    expect(text).not.toContain(GONE);
    expect(text.split('\n')).toHaveLength(3);
    // The next member is the same bytes.
    expect(out.bytes.subarray(second.jobsRange[0]).equals(files.jobsBody.subarray(second.jobsRange[0]))).toBe(
      true,
    );
  });

  it('free text naming both shops, whose masked member deflates longer, keeps the other shop’s jobs: the mention is cut to one *', () => {
    // `….myshopify.com` of the gone shop was a back-reference to OTHER's id: 18 `*` deflate 1–3
    // bytes longer at every zlib setting, so before this the member was emptied (o1 and o2 lost).
    for (const n of [1, 2, 3]) {
      const groups: PageGroup[] = [
        {
          shopId: OTHER,
          month: '2026-02',
          jobs: [
            {
              ...job('o1', '2026-02'),
              error_message: `sync with ${GONE} failed; retried ${n} times (${OTHER})`,
            },
            job('o2', '2026-02'),
          ],
        },
      ];
      const files = layoutPlanFiles('run-1', 0, groups, { batchGroups: 2, batchJobs: 100 });
      const out = scrubPlannedJobs(files.jobsBody, [], m);
      expect(out.length).toBe(files.jobsBody.length);
      const lines = gunzipSync(out)
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '');
      expect(lines.map((l) => (JSON.parse(l) as PlannedJob).job_id)).toEqual(['o1', 'o2']);
      expect(m.names(lines.join('\n'))).toBe(false); // OTHER (big-acme…) stays
      expect(lines[0]).toMatch(/sync with \*+ failed/);
      expect(scrubPlannedJobs(out, [], m).equals(out)).toBe(true);
    }
  });

  it('when neither masked nor cut text deflates short enough, every string naming the shop becomes *', () => {
    // A group's member as Plan writes it (this shape from the embedded stack, ids fixed): neither its
    // masked nor its cut text deflates to the member's length or less at any zlib setting tried.
    const gone = 'rs2-gone.myshopify.com';
    const other = `big-${gone}`;
    const ids = ['rgzzlinvqir6w', 'hngmwtshze44a', '74ltpvatimekt'];
    const etags = [
      '64eb481b1c5e14624a1d61c6315bd5db',
      'ad75bf6f49451627900238d62b9a2180',
      'e9145c25a017c824ac75a94bd317dc55',
    ];
    const at = '2026-11-28T21:34:47.000Z';
    const body = ids
      .map((id, i) => {
        const day = `2026-09-0${i + 4}`;
        const objects = ['a49ba8bb2e513b94.json.gz', 'af525c70e92a103a.json.gz', 'platform-data.json'].map(
          (name, k) => ({
            key: `job-details/${id}/${name}`,
            size: k === 2 ? 19 : 120,
            etag: etags[k],
            lastModified: at,
          }),
        );
        return `${JSON.stringify({
          job_id: id,
          status: 'FAILED',
          completed_at: `${day}T12:00:00.000Z`,
          created_at: `${day}T11:00:00.000Z`,
          started_at: `${day}T11:01:00.000Z`,
          job_type: 'full_sync',
          platform: 'shopify',
          error_message: `sync with ${gone} failed; retried ${i + 1} times (${other})`,
          retry_count: null,
          is_internal: null,
          initiator_user_id: null,
          estimated_time_minutes: null,
          ttl: 1796299200 + i * 86400,
          objects,
        })}\n`;
      })
      .join('');
    const member = gzipSync(body);
    const g = new ShopMatcher([gone]);
    const out = scrubPlannedJobs(member, [], g);
    expect(out.length).toBe(member.length);
    const jobs = lines(out).map((l) => JSON.parse(l) as PlannedJob);
    expect(jobs.map((j) => j.job_id)).toEqual(ids);
    expect(jobs.map((j) => j.error_message)).toEqual(['*', '*', '*']);
    expect(g.names(gunzipSync(out).toString('utf8'))).toBe(false);
    expect(scrubPlannedJobs(out, [], g).equals(out)).toBe(true);
  });

  it('bytes of a planned-jobs file that are no gzip member are emptied, never kept', () => {
    const files = layoutPlanFiles(
      'run-1',
      0,
      [{ shopId: OTHER, month: '2026-02', jobs: [job('o1', '2026-02')] }],
      {
        batchGroups: 2,
        batchJobs: 100,
      },
    );
    const junk = Buffer.concat([files.jobsBody, Buffer.from(`{"shop":"${GONE}"}\n`)]);
    const out = scrubPlannedJobs(junk, [], m);
    expect(out.length).toBe(junk.length);
    expect(out.subarray(0, files.jobsBody.length).equals(files.jobsBody)).toBe(true);
    expect(out.toString('latin1')).not.toContain(GONE);
    expect(gunzipSync(out).toString('utf8')).toBe(gunzipSync(files.jobsBody).toString('utf8'));
  });

  it('Map run results: the shop’s groups leave each child’s input and output; a child of the shop alone goes; causes are redacted', () => {
    const group = (shopId: string) => ({
      shopId,
      month: '2026-02',
      jobsKey: 'k',
      jobsRange: [0, 1],
      jobCount: 1,
    });
    const done = (shopId: string) => ({ group: { shopId, month: '2026-02' }, archive: { archived: 1 } });
    const entries = [
      {
        Name: 'a_0',
        Status: 'SUCCEEDED',
        Input: JSON.stringify({
          run: { runId: 'r' },
          batch: { page: 0, batch: 0, groups: [group(GONE), group(OTHER)] },
        }),
        Output: JSON.stringify({ results: [done(GONE), done(OTHER)], overhead: { s3: 2 } }),
      },
      {
        Name: 'a_1',
        Status: 'SUCCEEDED',
        Input: JSON.stringify({ run: { runId: 'r' }, batch: { page: 0, batch: 1, groups: [group(GONE)] } }),
        Output: JSON.stringify({ results: [done(GONE)], overhead: { s3: 1 } }),
      },
    ];
    const out = parsed(scrubScratchObject('results/0/9f0c/SUCCEEDED_0.json', json(entries), m)) as Array<{
      Name: string;
      Input: string;
      Output: string;
    }>;
    expect(out.map((e) => e.Name)).toEqual(['a_0']);
    expect(JSON.parse(out[0]?.Input ?? '')).toEqual({
      run: { runId: 'r' },
      batch: { page: 0, batch: 0, groups: [group(OTHER)] },
    });
    expect(JSON.parse(out[0]?.Output ?? '')).toEqual({ results: [done(OTHER)], overhead: { s3: 2 } });

    const failed = [
      {
        Name: 'a_2',
        Status: 'FAILED',
        Input: JSON.stringify({ run: {}, batch: { page: 0, batch: 2, groups: [group(GONE), group(OTHER)] } }),
        Error: 'ShopForgottenError',
        Cause: `shop ${GONE} was forgotten`,
      },
    ];
    const f = parsed(scrubScratchObject('results/0/9f0c/FAILED_0.json', json(failed), m)) as Array<{
      Cause: string;
    }>;
    expect(f[0]?.Cause).toBe(`shop ${PSEUDO} was forgotten`);
  });

  it('page results, plan findings and carried retries lose the shop’s entries; a group’s findings (keyed by the shop) are deleted', () => {
    const pageOut = scrubScratchObject(
      'pages/0.json.gz',
      gzipSync(
        json({
          format: 'job-details-archive/page-results@2',
          page: 0,
          plan_quarantined: 2,
          results: [
            {
              group: { shopId: GONE, month: '2026-02' },
              failed: true,
              error: 'ShopForgottenError',
              cause: `${GONE}`,
            },
            { group: { shopId: OTHER, month: '2026-02' }, failed: true, error: 'X', cause: 'y' },
          ],
        }),
      ),
      m,
    );
    if (pageOut.action !== 'put') throw new Error('expected a rewrite');
    // Written back gzip, as Tally writes it.
    const page = JSON.parse(gunzipSync(pageOut.bytes).toString('utf8')) as {
      plan_quarantined: number;
      results: unknown[];
    };
    expect(page.plan_quarantined).toBe(2);
    expect(page.results).toEqual([
      { group: { shopId: OTHER, month: '2026-02' }, failed: true, error: 'X', cause: 'y' },
    ]);

    const findings = parsed(
      scrubScratchObject(
        'findings/0/plan-quarantined.json',
        json({
          items: [
            { shopId: GONE, jobId: 'j1', reason: 'r' },
            { shopId: OTHER, jobId: 'j2', reason: 'r' },
          ],
        }),
        m,
      ),
    ) as { items: unknown[] };
    expect(findings.items).toEqual([{ shopId: OTHER, jobId: 'j2', reason: 'r' }]);

    const carried = parsed(
      scrubScratchObject(
        'retry-carried.json',
        json({
          retry: [
            { shopId: GONE, jobId: 'j1' },
            { shopId: OTHER, jobId: 'j2' },
          ],
        }),
        m,
      ),
    ) as { retry: unknown[] };
    expect(carried.retry).toEqual([{ shopId: OTHER, jobId: 'j2' }]);

    expect(scrubScratchObject(`findings/0/${GONE}/2026-02/quarantined.json`, json({ items: [] }), m)).toEqual(
      {
        action: 'delete',
      },
    );
    expect(scrubScratchObject('attempts/0/1-x.json', json({ requests: { s3: 1 } }), m)).toEqual({
      action: 'keep',
    });
  });

  it('a report keeps its counts and its failed groups (under the pseudonym); the shop’s jobs leave its lists', () => {
    const report = {
      jobsQuarantinedCount: 2,
      groupsFailedCount: 1,
      jobsQuarantined: [
        { shopId: GONE, jobId: 'j1', reason: 'r' },
        { shopId: OTHER, jobId: 'j2', reason: 'r' },
      ],
      deleteErrorList: [{ shopId: GONE, month: '2026-02', key: 'job-details/j1/a', code: 'X' }],
      groupsFailed: [
        { shopId: GONE, month: '2026-02', error: 'ShopForgottenError', cause: `shop ${GONE} forgotten` },
      ],
      erasureOverdue: [{ id: 'wh-1', kind: 'forget-shop', shopId: GONE }],
    };
    expect(parsed(scrubScratchObject('report.json', json(report), m))).toEqual({
      jobsQuarantinedCount: 2,
      groupsFailedCount: 1,
      jobsQuarantined: [{ shopId: OTHER, jobId: 'j2', reason: 'r' }],
      deleteErrorList: [],
      groupsFailed: [
        { shopId: PSEUDO, month: '2026-02', error: 'ShopForgottenError', cause: `shop ${PSEUDO} forgotten` },
      ],
      erasureOverdue: [{ id: 'wh-1', kind: 'forget-shop', shopId: PSEUDO }],
    });
  });

  it('gzip bodies are read through and written back gzip; text that is not JSON is redacted as text', () => {
    const gz = gzipSync(json({ shopId: GONE }));
    expect(scratchNames('x.json', gz, m)).toBe(true);
    const out = scrubScratchObject('x.json', gz, m);
    if (out.action !== 'put') throw new Error('expected a rewrite');
    expect(JSON.parse(gunzipSync(out.bytes).toString('utf8'))).toEqual({ shopId: PSEUDO });
    const txt = scrubScratchObject('notes.txt', Buffer.from(`about ${GONE}, {not json`), m);
    expect(txt).toEqual({ action: 'put', bytes: Buffer.from(`about ${PSEUDO}, {not json`) });
  });

  it('several shops at once (a run’s Report scrubs all the shops forgotten while it ran)', () => {
    const two = new ShopMatcher([GONE, OTHER]);
    expect(two.redact(`${OTHER} ${GONE}`)).toBe(`${shopPseudonym(OTHER)} ${PSEUDO}`);
    const carried = parsed(
      scrubScratchObject(
        'retry-carried.json',
        json({ retry: [{ shopId: GONE }, { shopId: OTHER }, { shopId: 'x' }] }),
        two,
      ),
    );
    expect(carried).toEqual({ retry: [{ shopId: 'x' }] });
  });
});
