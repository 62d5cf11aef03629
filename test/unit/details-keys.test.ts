import { classifyJobKey, detailsKey, jobPrefix, parseFlushKey, platformDataKey } from '../../shared/details';
import { InvalidIdError } from '../../shared/errors';

const BAD_IDS: [string, unknown][] = [
  ['empty', ''],
  ['parent dir', '../x'],
  ['dot-dot', '..'],
  ['slash', 'a/b'],
  ['control char', 'a\u0000b'],
  ['newline', 'a\nb'],
  ['over-long', 'x'.repeat(65)],
  ['not a string', 42],
];

describe('hot key layout', () => {
  it('is exactly the seed layout', () => {
    expect(jobPrefix('j1')).toBe('job-details/j1/');
    expect(detailsKey('j1', '0123456789abcdef')).toBe('job-details/j1/0123456789abcdef.json.gz');
    expect(platformDataKey('j1')).toBe('job-details/j1/platform-data.json');
  });

  it.each(BAD_IDS)('rejects a %s job id or flush id with InvalidIdError', (_case, id) => {
    expect(() => jobPrefix(id as string)).toThrow(InvalidIdError);
    expect(() => platformDataKey(id as string)).toThrow(InvalidIdError);
    expect(() => detailsKey(id as string, 'f1')).toThrow(InvalidIdError);
    expect(() => detailsKey('j1', id as string)).toThrow(InvalidIdError);
  });

  it('parses flush keys back and refuses anything else', () => {
    expect(parseFlushKey('job-details/j1/f1.json.gz')).toEqual({ jobId: 'j1', flushId: 'f1' });
    for (const key of [
      'job-details/j1/platform-data.json',
      'job-details/j1/a/f1.json.gz',
      'job-details/../f1.json.gz',
      'job-details/j1/.json.gz',
      'job-details-cold/j1/f1.json.gz',
      'job-details/j1/f1.json',
    ]) {
      expect(parseFlushKey(key)).toBeUndefined();
    }
  });

  it('classifies what a job listing holds', () => {
    expect(classifyJobKey('j1', 'job-details/j1/f1.json.gz')).toBe('flush');
    expect(classifyJobKey('j1', 'job-details/j1/platform-data.json')).toBe('platform-data');
    expect(classifyJobKey('j1', 'job-details/j1/nested/f1.json.gz')).toBe('other');
    expect(classifyJobKey('j1', 'job-details/j1/notes.txt')).toBe('other');
    expect(classifyJobKey('j1', 'job-details/j10/f1.json.gz')).toBe('other');
  });
});
