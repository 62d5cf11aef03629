// Lambda handler for the 'delete-sources' step. Thin: parse the event, call shared/, return; errors are thrown.
export const handler = async (_event: unknown): Promise<unknown> => {
  throw new Error('delete-sources: not implemented yet');
};
