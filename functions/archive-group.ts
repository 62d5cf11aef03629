// Lambda handler for the 'archive-group' step. Thin: parse the event, call shared/, return; errors are thrown.
export const handler = async (_event: unknown): Promise<unknown> => {
  throw new Error('archive-group: not implemented yet');
};
