// Lambda handler for the 'tally' step. Thin: parse the event, call shared/, return; errors are thrown.
export const handler = async (_event: unknown): Promise<unknown> => {
  throw new Error('tally: not implemented yet');
};
