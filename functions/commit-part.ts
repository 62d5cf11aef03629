// Lambda handler for the 'commit-part' step. Thin: parse the event, call shared/, return; errors are thrown.
export const handler = async (_event: unknown): Promise<unknown> => {
  throw new Error('commit-part: not implemented yet');
};
