import { shellWord } from './cli-fix';

/** The exit code of a command ended by Ctrl-C (SIGINT), as shells give it: 128 + 2. */
export const EXIT_INTERRUPTED = 130;

/** Commands whose request changes something: cut off in flight, it may have been applied. */
const WRITES = new Set(['schedule', 'cancel', 'reschedule', 'pause', 'resume', 'trigger', 'backfill']);

/**
 * What Ctrl-C leaves behind, for `sundial <argv>`: nothing for a read; for a write, a request that may
 * have reached the scheduler; for repartition, a move that the same command resumes (docs/operations.md).
 */
export function interruptedText(argv: string[]): string {
  const [name] = argv;
  const line = argv.map(shellWord).join(' ');
  if (name === 'repartition') {
    return `sundial: interrupted: the repartition stopped where it was\nfix: Run sundial ${line} again to resume it.\n`;
  }
  if (name !== undefined && WRITES.has(name)) {
    return (
      'sundial: interrupted: the request may or may not have been applied\n' +
      `fix: With an --idempotency-key, run sundial ${line} again (a repeat changes nothing more); without one, check with sundial get or sundial list first.\n`
    );
  }
  return 'sundial: interrupted\n';
}
