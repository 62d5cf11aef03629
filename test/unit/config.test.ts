import { ENV, parseConfig, requireSetting } from '../../shared/config';
import { ConfigError } from '../../shared/errors';

describe('parseConfig', () => {
  it('gives documented defaults for an empty environment', () => {
    const cfg = parseConfig({});
    expect(cfg).toMatchObject({
      detailsBucket: undefined,
      jobsTable: undefined,
      region: 'us-east-1',
      olderThanDays: 30,
      graceHours: 0,
      jobTtlDays: 90,
      readConcurrency: 32,
      restoreTier: 'Standard',
      restoreDays: 7,
    });
  });

  it('an empty or blank bucket variable means "not configured" (the seed kill-switch)', () => {
    expect(parseConfig({ [ENV.bucket]: '' }).detailsBucket).toBeUndefined();
    expect(parseConfig({ [ENV.bucket]: '   ' }).detailsBucket).toBeUndefined();
    expect(parseConfig({ [ENV.bucket]: 'details' }).detailsBucket).toBe('details');
  });

  it('reads the SDK endpoint variables the local stack sets', () => {
    const cfg = parseConfig({
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:2',
      AWS_REGION: 'eu-west-1',
    });
    expect(cfg).toMatchObject({
      s3Endpoint: 'http://127.0.0.1:1',
      dynamoEndpoint: 'http://127.0.0.1:2',
      region: 'eu-west-1',
    });
  });

  it('grace hours may be 0', () => {
    expect(parseConfig({ [ENV.graceHours]: '0' }).graceHours).toBe(0);
  });

  it.each([
    [ENV.olderThanDays, 'thirty'],
    [ENV.graceHours, '-1'],
    [ENV.readConcurrency, '1.5'],
    [ENV.readConcurrency, '0'],
    [ENV.restoreTier, 'Instant'],
  ])('%s=%s → ConfigError naming the variable', (variable, value) => {
    const err = (() => {
      try {
        parseConfig({ [variable]: value });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as ConfigError).message).toContain(value);
  });

  it('requireSetting names the missing variable', () => {
    expect(() => requireSetting(parseConfig({}), 'jobsTable', ENV.table)).toThrow(
      /ECOM_JOBS_TABLE: is not set/,
    );
    expect(requireSetting(parseConfig({ [ENV.table]: 'jobs' }), 'jobsTable', ENV.table)).toBe('jobs');
  });
});
