import type { Provenance, ReadSource } from './types';

/** What one read has done so far (requests, bytes, parts, warnings): its provenance. Pure bookkeeping; the I/O layer calls it once per request and body. */
export class ReadLedger {
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
