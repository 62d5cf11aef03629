// `cdk synth` entry (cdk.json). Env-agnostic: synthesizes offline, without AWS credentials.
// `-c tableName=… -c bucketName=…` deploys onto an existing table and bucket (createArchiveApp).
import { createArchiveApp } from './archive-stack';

createArchiveApp().app.synth();
