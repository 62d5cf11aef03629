import { handlerCpu } from '../../infra/local/runner';

/** A CPU clock the test moves by hand (microseconds of user time). */
const clock = () => {
  let user = 0;
  return { usage: () => ({ user, system: 0 }), spend: (ms: number) => (user += ms * 1000) };
};

describe('handlerCpu: the CPU the steps would bill, nothing counted twice', () => {
  it('counts CPU only while a handler runs: the interpreter between handlers is left out', () => {
    const c = clock();
    const cpu = handlerCpu(c.usage);
    const plan = { cpuSeconds: 0 };
    c.spend(40); // the interpreter before the first Task
    const leave = cpu.enter(plan);
    c.spend(10);
    leave();
    c.spend(25); // between Tasks
    expect(plan.cpuSeconds).toBeCloseTo(0.01, 9);
    expect(cpu.seconds()).toBeCloseTo(0.01, 9);
  });

  it('splits a stretch several handlers share evenly between them', () => {
    const c = clock();
    const cpu = handlerCpu(c.usage);
    const batch = { cpuSeconds: 0 };
    const tally = { cpuSeconds: 0 };
    const a = cpu.enter(batch);
    c.spend(10); // batch alone
    const b = cpu.enter(batch);
    c.spend(20); // two batches
    const t = cpu.enter(tally);
    c.spend(30); // two batches and tally
    a();
    b();
    c.spend(6); // tally alone
    t();
    expect(batch.cpuSeconds).toBeCloseTo(0.01 + 0.02 + 0.02, 9);
    expect(tally.cpuSeconds).toBeCloseTo(0.01 + 0.006, 9);
    expect(cpu.seconds()).toBeCloseTo(0.066, 9);
  });
});
