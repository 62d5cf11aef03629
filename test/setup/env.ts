import { applyStackEnv } from '../../infra/local/env';
import { readHandoff } from '../../infra/local/handoff';

/**
 * Runs before each test file. Workers normally inherit the endpoints the global setup put into
 * process.env; the handoff file covers runners that do not pass the environment on.
 */
const handoff = readHandoff();
if (handoff) applyStackEnv(handoff);

// Handlers called directly (outside the local runner, which captures them) stay quiet.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

// Most tests seed jobs a few days past an exact cutoff; whole-month runs (the deployed default) are
// tested where they say `wholeMonths: true` (test/integration/archiver-whole-months.test.ts, the benchmark).
process.env.JDA_WHOLE_MONTHS ??= 'false';
// One part and index per shop-month, as the tests read them; packing is tested on its own
// (archiver-packed.test.ts, which sets packBelowKb on its steps).
process.env.JDA_PACK_BELOW_KB ??= '0';
