// Lambda handler for the 'verify-part' step. Thin: parse the event, call shared/, return; errors are thrown.
export const handler = async (_event: unknown): Promise<unknown> => {
  throw new Error('verify-part: not implemented yet');
};
