import { type App, type Stage, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

/**
 * Turns cdk-nag's AWS Solutions checks on for an app or stage (the stack's app does; a consumer opts
 * in). Kept apart so importing the construct never loads cdk-nag.
 */
export const enableNag = (app: App | Stage): void => {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
};
