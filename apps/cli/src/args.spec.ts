import { onlyOptions, parseArgs } from './args';

describe('sundial CLI: an option the command does not take', () => {
  const usage = 'sundial list [--prefix <p>] [--status <s>]';

  // It said only the usage: which of its options was meant was left to the reader.
  it('is refused naming the option it is closest to, then the usage', () => {
    expect(() => onlyOptions(parseArgs(['--prefx', 'a']), ['prefix', 'status'], usage)).toThrow(
      expect.objectContaining({
        reason: 'usage',
        message: 'unknown option --prefx',
        fix: `Did you mean --prefix? Usage: ${usage}`,
      }),
    );
  });

  it('is refused with the usage alone when none is close', () => {
    expect(() => onlyOptions(parseArgs(['--verbose']), ['prefix', 'status'], usage)).toThrow(
      expect.objectContaining({ message: 'unknown option --verbose', fix: `Usage: ${usage}` }),
    );
  });
});
