import { loadOptional, MissingPackageError } from '../../infra/local/errors';

/** The embedded stack's optional packages: a production install may omit them (npm --omit=optional). */
describe('loadOptional', () => {
  it('names a missing package, what needs it and how to add it', () => {
    const load = () =>
      loadOptional('no-such-package-jda', 'the embedded stack', () => require('no-such-package-jda'));
    expect(load).toThrow(MissingPackageError);
    expect(load).toThrow(
      'the embedded stack needs the npm package no-such-package-jda, which is not installed (npm install no-such-package-jda)',
    );
  });

  it('passes any other failure through unchanged, including another missing module', () => {
    expect(() =>
      loadOptional('aws-cdk-lib', 'a local run', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(() => loadOptional('aws-cdk-lib', 'a local run', () => require('no-such-package-jda'))).toThrow(
      /Cannot find module 'no-such-package-jda'/,
    );
    expect(loadOptional('aws-cdk-lib', 'a local run', () => 42)).toBe(42);
  });
});
