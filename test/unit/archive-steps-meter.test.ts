import { createRequestMeter } from '../../shared/archive/steps/meter';

/** What the counting middleware calls for each request. */
const request = (sink: (kind: 's3' | 'dynamodb', type: string) => void, kind: 's3' | 'dynamodb') => {
  sink(kind, kind === 's3' ? 's3.GetObject' : 'dynamodb.Query');
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

test('concurrent measured calls each see only their own requests', async () => {
  const meter = createRequestMeter();
  const work = async (n: number, kind: 's3' | 'dynamodb') => {
    for (let i = 0; i < n; i++) {
      await tick();
      request(meter.sink, kind);
    }
  };
  const [a, b, c] = await Promise.all([
    meter.measure(() => work(5, 's3')),
    meter.measure(() => work(3, 'dynamodb')),
    meter.measure(async () => {
      await work(2, 's3');
      await work(1, 'dynamodb');
    }),
  ]);
  expect(a.requests).toEqual({ s3: 5, dynamodb: 0, byType: { 's3.GetObject': 5 } });
  expect(b.requests).toEqual({ s3: 0, dynamodb: 3, byType: { 'dynamodb.Query': 3 } });
  expect(c.requests).toEqual({ s3: 2, dynamodb: 1, byType: { 's3.GetObject': 2, 'dynamodb.Query': 1 } });
  expect(meter.total).toEqual({ s3: 7, dynamodb: 4, byType: { 's3.GetObject': 7, 'dynamodb.Query': 4 } });
});

test('nested scopes count into their parents; requests outside any scope only into the total', async () => {
  const meter = createRequestMeter();
  request(meter.sink, 's3');
  const outer = await meter.measure(async () => {
    request(meter.sink, 's3');
    const inner = await meter.measure(async () => {
      request(meter.sink, 'dynamodb');
      return 'v';
    });
    expect(inner).toEqual({ value: 'v', requests: { s3: 0, dynamodb: 1, byType: { 'dynamodb.Query': 1 } } });
  });
  expect(outer.requests).toMatchObject({ s3: 1, dynamodb: 1 });
  expect(meter.total).toMatchObject({
    s3: 2,
    dynamodb: 1,
    byType: { 's3.GetObject': 2, 'dynamodb.Query': 1 },
  });
});
