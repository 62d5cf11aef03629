/**
 * The AWS SDK warns on every process under Node < 22 (a support notice, not an error). This machine
 * runs Node 20 and the deployed Lambdas run Node 24, so in the CLI and the test workers it is noise
 * that buries real output. Only that notice is dropped; every other warning passes through.
 */
export const muteSdkNodeVersionNotice = (): void => {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('NodeVersionSupportWarning')) return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
};
