// `cdk synth` entry (cdk.json). Env-agnostic: synthesizes offline, without AWS credentials.
import { createArchiveApp } from './archive-stack';

createArchiveApp().app.synth();
