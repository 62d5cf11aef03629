// The jobs table hot path: create, flush, complete, look up. See types.ts for the row shape.
export * from './create-job';
export * from './job-repo';
export * from './record-flush';
export * from './schema';
export * from './terminal';
export * from './types';
