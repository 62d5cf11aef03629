import { repairWatermark, type WatermarkRepair } from '../../shared/archive/steps/plan/watermark-repair';
import { boolFlag, type CommandSpec, type Flags } from './args';
import type { CliContext } from './context';
import { type Output, printJson } from './output';

export const repairWatermarkSpec: CommandSpec = {
  name: 'repair-watermark',
  short: 'replace a corrupt plan watermark, keeping the erasure summary',
  summary:
    'Every run fails on a watermark (job-details-state/watermark.json) that does not parse. This sets its bytes ' +
    'aside under job-details-runs/repair-watermark-{time}/ and writes a watermark no run wrote yet, its erasure ' +
    'summary (forgotten shops, open requests) rebuilt from the tombstones and the request ledger. The next run ' +
    'plans as the first run ever. A watermark that parses is left alone.',
  options: {},
  notes: [
    'Cost: 2 GETs of the watermark, 1 PUT of the copy, 1 LIST of job-details-erasure/, a GET per tombstone and',
    'per open request, 1 conditional PUT. The next run reads every terminal status of the GSI from the beginning.',
  ],
};

export interface RepairWatermarkOptions {
  readonly json: boolean;
}

export const parseRepairWatermarkOptions = (flags: Flags): RepairWatermarkOptions => ({
  json: boolFlag(flags, 'json'),
});

export const repairWatermarkCommand = async (
  ctx: CliContext,
  o: RepairWatermarkOptions,
  io: Output,
): Promise<WatermarkRepair> => {
  const r = await repairWatermark({ s3: ctx.s3, bucket: ctx.bucket }, ctx.now());
  if (o.json) printJson(io, r);
  else if (r.state === 'repaired')
    io.out(
      `repair-watermark: replaced (${r.reason}); corrupt bytes set aside at ${r.setAside}; erasure summary rebuilt: ${r.forgottenShops} forgotten shops, ${r.openRequests} open requests; the next run plans from the beginning`,
    );
  else io.out(`repair-watermark: nothing to repair (the watermark is ${r.state})`);
  return r;
};
