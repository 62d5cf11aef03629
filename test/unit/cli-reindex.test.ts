import { runCli } from '../../infra/cli/main';
import { memoryOutput } from '../../infra/cli/output';

/** `jobarchive reindex` arguments are checked before any stack starts (no emulator needed). */
describe('jobarchive reindex arguments', () => {
  it('a bad month is exit 2 with one line naming it', async () => {
    const io = memoryOutput();
    expect(await runCli(['reindex', '--shop', 'acme.myshopify.com', '--month', '2026-13'], io)).toBe(2);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toHaveLength(1);
    expect(io.stderr[0]).toMatch(/^jobarchive reindex: invalid month "2026-13"/);
  });

  it('is listed in the general help', async () => {
    const io = memoryOutput();
    expect(await runCli(['--help'], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/reindex\s+rebuild a lost or corrupt month index/);
  });
});
