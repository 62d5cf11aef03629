import type { Provenance, ReadSource } from './types';

/** What one read has cost so far. Pure bookkeeping; the I/O layer calls it once per request and body. */
export class ReadTally {
  private requestCount = 0;
  private byteCount = 0;
  private readonly partKeys = new Set<string>();
  private readonly warningList: string[] = [];

  request(): void {
    this.requestCount += 1;
  }

  received(bytes: number): void {
    this.byteCount += bytes;
  }

  partRead(key: string): void {
    this.partKeys.add(key);
  }

  /** Damage the read went around (e.g. a corrupt archive member while the hot copy answered). */
  warn(message: string): void {
    this.warningList.push(message);
  }

  get warnings(): readonly string[] {
    return this.warningList;
  }

  get requests(): number {
    return this.requestCount;
  }

  provenance(source: ReadSource, inline: readonly string[] = []): Provenance {
    return {
      source,
      parts: [...this.partKeys].sort(),
      requests: this.requestCount,
      bytes: this.byteCount,
      inline: [...inline],
      warnings: [...this.warningList],
    };
  }
}

/** Which side(s) contributed to a result. */
export const sourceOf = (hot: boolean, archive: boolean): ReadSource =>
  hot && archive ? 'both' : hot ? 'hot' : archive ? 'archive' : 'none';

/** Where anything in a combined result came from (e.g. details from the archive, platform data hot). */
export const combineSources = (...sources: ReadSource[]): ReadSource =>
  sources.every((s) => s === 'row' || s === 'none') && sources.includes('row')
    ? 'row'
    : sourceOf(
        sources.some((s) => s === 'hot' || s === 'both'),
        sources.some((s) => s === 'archive' || s === 'both'),
      );
