// Lambda handler for the 'plan' step. Thin: parse the event, call shared/, return; errors are thrown.
export const handler = async (_event: unknown): Promise<unknown> => {
  throw new Error('plan: not implemented yet');
};
