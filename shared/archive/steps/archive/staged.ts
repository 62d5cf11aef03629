import type { PendingPart } from '../../format';

/**
 * The manifest the archive stage hands to verify (in memory): staging.ts `PendingPart` plus the ETag
 * S3 gave the uploaded part (known only after the upload, so PartBuilder cannot fill it in).
 */
export type StagedPart = PendingPart & { readonly etag: string };
