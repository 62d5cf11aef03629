import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const NAME = 'job-details-archive';

/**
 * The package's root: the nearest folder above this file whose package.json is ours. The same answer
 * from the sources in a checkout (`infra/`) and from the build in an installed package (`dist/infra/`),
 * so files shipped beside `dist/` (package.json, docs/) are found either way.
 */
export const packageRoot = (from: string = __dirname): string => {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === NAME
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json named ${NAME} above ${from}`);
  }
};

/** The installed package's version. */
export const packageVersion = (): string =>
  (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
