import { App, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { JobDetailsArchive } from './job-details-archive';
import type { JobDetailsArchiveProps } from './props';

export const ARCHIVE_STACK_NAME = 'JobDetailsArchive';

export interface ArchiveStackProps extends StackProps {
  /** Props of the one construct in the stack. */
  readonly archive?: JobDetailsArchiveProps;
}

/** A standalone deployment of the archiver with its own table and bucket (env-agnostic by default). */
export class ArchiveStack extends Stack {
  readonly archive: JobDetailsArchive;

  constructor(scope: Construct, id: string, props: ArchiveStackProps = {}) {
    super(scope, id, {
      description: 'job-details-archive: cold-tier archiver of per-job diagnostic data',
      ...props,
    });
    this.archive = new JobDetailsArchive(this, 'Archive', props.archive);
  }
}

export interface ArchiveAppOptions {
  /** Extra app context, e.g. `{ 'aws:cdk:bundling-stacks': [] }` to skip esbuild. */
  readonly context?: Record<string, unknown>;
  readonly archive?: JobDetailsArchiveProps;
  /** Run cdk-nag AwsSolutions during synth (any finding throws). @default true */
  readonly nag?: boolean;
  /** Cloud assembly directory. @default - `CDK_OUTDIR` (set by the CLI), else a new temp dir */
  readonly outdir?: string;
}

/** The app exactly as `cdk synth` builds it (infra/app.ts); tests and the local runner build it too. */
export const createArchiveApp = (opts: ArchiveAppOptions = {}): { app: App; stack: ArchiveStack } => {
  const app = new App({ context: opts.context, outdir: opts.outdir });
  // Loaded only when asked for: cdk-nag is a devDependency here and an optional peer of the package,
  // and the CLI's local runs synthesize without it.
  if (opts.nag ?? true) (require('./enable-nag') as typeof import('./enable-nag')).enableNag(app);
  const stack = new ArchiveStack(app, ARCHIVE_STACK_NAME, { archive: opts.archive });
  return { app, stack };
};
